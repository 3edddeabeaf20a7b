"""
The cluster path: the same ``checksum`` program, run by a job through ``spark-submit`` on a real standalone cluster
(master and worker started from pyspark's own jars on 127.0.0.1), returns the checksums computed here, and the job
records the Spark application and its UI; the master kills an application when cancel asks it to.
"""

from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path

import pytest

from operations.models import Job
from operations.services.jobs import run_job
from operations.services.spark_jobs import enqueue_spark_job
from operations.spark.engine import (
    ProgressReader,
    SparkEngine,
    kill_application,
    launch_driver,
    read_manifest,
    stop_driver,
    write_driver_files,
)
from tests.fixtures.spark_cluster import StandaloneCluster
from tests.fixtures.spark_jobs import data_directories, expected_checksums
from tests.fixtures.workers import wait_for

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
    assert "Driver started on spark://127.0.0.1:" in " ".join(line.message for line in job.recent_log.lines)
    assert Job.objects.get(pk=job.pk).log_tail  # the driver's own log


def test_a_standalone_master_kills_an_application_on_request(
    spark_standalone: StandaloneCluster, tmp_path: Path
) -> None:
    """Cancel's cluster side: the master's kill action ends the application, and with it the client-mode driver."""
    # given: a driver started through the engine, its application registered with the master
    engine = SparkEngine(
        master=spark_standalone.master_url, conf={"spark.cores.max": "1"}, master_ui=spark_standalone.master_ui
    )
    plan = {"directories": data_directories(tmp_path / "data", count=3), "pause_seconds": 3}
    files = write_driver_files(
        tmp_path / "driver", engine=engine, program="checksum", plan=plan, app_name="kill me", worker_pid=os.getpid()
    )
    driver = launch_driver(engine, files)
    reader = ProgressReader(files.work)
    events: list[dict] = []
    try:
        app_id = wait_for(
            lambda: (
                events.extend(reader.read()) or next((e["spark_app_id"] for e in events if "spark_app_id" in e), None)
            ),
            "the application to start",
        )

        # when
        asked = kill_application(engine, app_id)

        # then
        assert asked
        assert driver.wait(timeout=240) != 0  # the driver's next Spark job fails: its application is gone
        assert read_manifest(files) is None
        state = wait_for(lambda: application_state(spark_standalone.master_ui, app_id), "the master to list the app")
        assert state == "KILLED"
    finally:
        stop_driver(driver)


def application_state(master_ui: str, app_id: str) -> str | None:
    with urllib.request.urlopen(f"{master_ui}/json/", timeout=5) as answer:
        state = json.load(answer)
    return next((app["state"] for app in state.get("completedapps", []) if app["id"] == app_id), None)
