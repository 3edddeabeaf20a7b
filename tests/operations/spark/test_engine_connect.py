"""
Spark Connect: the ``checksum`` program run by a job over ``sc://`` on a real Spark Connect server (started from
pyspark's own ``sbin/start-connect-server.sh``) returns the checksums computed here. The server's Python workers have
neither the checkout nor ``PYTHONPATH``: the programs reach them only as the artifacts the driver ships.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from operations.services.jobs import run_job
from operations.services.spark_jobs import enqueue_spark_job
from tests.fixtures.spark_connect import ConnectServer
from tests.fixtures.spark_jobs import data_directories, expected_checksums

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


def test_a_checksum_job_runs_over_spark_connect(spark_connect: ConnectServer, settings, tmp_path: Path) -> None:  # noqa: ANN001
    """The executors of the Connect server read and digest every file; the job names the server's application and
    links its UI."""
    # given
    settings.CATALOG_SPARK_MASTER, settings.CATALOG_SPARK_MASTER_UI = spark_connect.url, spark_connect.ui
    locations = data_directories(tmp_path / "data")
    job = enqueue_spark_job(program="checksum", plan={"directories": locations}, actor="test")

    # when
    job = run_job(job.pk)

    # then
    assert (job.state, job.error) == ("succeeded", "")
    assert job.result["directories"] == expected_checksums(locations)
    assert job.spark_app_id.startswith("local-")  # the server's own application
    assert job.spark_ui_url == spark_connect.ui
    assert (job.partitions_done, job.partitions_total, job.files_done, job.files_total) == (3, 3, 9, 9)
    assert job.completed == locations
    log = " ".join(job.log_entries.values_list("message", flat=True))
    assert f"Driver started on {spark_connect.url} (connect" in log
