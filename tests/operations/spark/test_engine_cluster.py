"""
The cluster path: the same ``checksum`` program, run by a job through ``spark-submit`` on a real standalone cluster
(master and worker started from pyspark's own jars on 127.0.0.1), returns the checksums computed here, and the job
records the Spark application and its UI.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from operations.models import Job
from operations.services.jobs import run_job
from operations.services.spark_jobs import enqueue_spark_job
from tests.fixtures.spark_cluster import StandaloneCluster
from tests.fixtures.spark_jobs import data_directories, expected_checksums

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


def test_a_checksum_job_runs_on_a_standalone_cluster(
    spark_standalone: StandaloneCluster, settings, tmp_path: Path
) -> None:
    """Through spark-submit in client mode: the executors on the cluster's worker read and digest every file."""
    # given
    settings.CATALOG_SPARK_MASTER = spark_standalone.master_url
    settings.CATALOG_SPARK_CONF = "spark.executor.memory=512m spark.cores.max=1"
    locations = data_directories(tmp_path / "data")
    job = enqueue_spark_job(program="checksum", plan={"directories": locations}, actor="test")

    # when
    job = run_job(job.pk)

    # then
    assert (job.state, job.error) == ("succeeded", "")
    assert job.result["directories"] == expected_checksums(locations)
    assert job.spark_master == spark_standalone.master_url
    assert job.spark_app_id.startswith("app-")  # a standalone master's application id (local mode: "local-…")
    assert job.spark_ui_url.startswith("http://")
    assert (job.partitions_done, job.partitions_total, job.files_done, job.files_total) == (3, 3, 9, 9)
    assert job.bytes_done == job.bytes_total == sum(d["bytes"] for d in job.result["directories"].values())
    assert job.completed == locations
    assert "Driver started on spark://127.0.0.1:" in " ".join(line["message"] for line in job.log)
    assert Job.objects.get(pk=job.pk).log_tail  # the driver's own log
