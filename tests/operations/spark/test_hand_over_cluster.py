"""
Cluster deploy mode (``CATALOG_SPARK_DEPLOY_MODE=cluster``): the driver is not a child of the worker, so a stopping
worker cannot hand its process group over. It asks the driver to stop through the work location, waits for its exit
marker and fails the job resumable. The driver here is a real one on ``local[1]`` launched in client mode while the
runner sees a cluster engine: as on a cluster, its watchdog has no worker pid to follow (``worker_pid`` 0) and only
the work location's stop request ends it.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from operations.services import jobs, spark_jobs
from operations.services.jobs import run_job
from operations.services.spark_jobs import enqueue_spark_job
from operations.spark import engine as engine_module
from operations.spark.engine import SparkEngine
from operations.spark.entry import process_alive
from tests.fixtures.spark_jobs import data_directories
from tests.fixtures.workers import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


class ClusterEngine(SparkEngine):
    """An engine the runner takes for cluster deploy mode (its driver launched in client mode on ``local[1]``)."""

    @property
    def deploy_mode(self) -> str:
        return "cluster"


def test_a_stopping_worker_in_cluster_deploy_mode_stops_the_driver_and_fails_the_job_resumable(
    settings: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given: a slow checksum run by a worker that is asked to stop after the first verified directory
    settings.CATALOG_SPARK_MASTER = "local[1]"
    monkeypatch.setattr(spark_jobs, "spark_engine", lambda: ClusterEngine(master="local[1]"))
    client_command = engine_module.driver_command
    monkeypatch.setattr(
        engine_module,
        "driver_command",
        lambda engine, files, secret_settings=None: client_command(SparkEngine(master=engine.master), files),
    )
    monkeypatch.setattr(jobs, "_STOPPING", threading.Event())
    locations = data_directories(tmp_path / "data", count=5)
    job = enqueue_spark_job(program="checksum", plan={"directories": locations, "pause_seconds": 2}, actor="test")
    work = Path(settings.CATALOG_SPARK_WORK_DIR) / f"job-{job.pk}" / "attempt-1"
    shutil.rmtree(work.parent, ignore_errors=True)  # an earlier run's job of the same id left its files
    progress = work / "progress.jsonl"

    def sigterm() -> None:
        wait_for(lambda: progress.exists() and '"unit_done"' in progress.read_text(), "a verified directory")
        jobs.request_stop()

    stopper = threading.Thread(target=sigterm, daemon=True)
    stopper.start()

    # when
    failed = run_job(job.pk)
    stopper.join(timeout=60)

    # then: not handed over; the driver stopped on the work location's request and confirmed it before the failure
    log = " ".join(failed.log_entries.values_list("message", flat=True))
    assert failed.state == "failed" and "confirmed it stopped" in failed.error, failed.error
    assert "Cluster deploy mode: the driver runs on the cluster, not as a child of this worker, so it cannot be " in log
    assert failed.adoption is None and 1 <= len(failed.completed) < 5
    assert (work / "cancel").exists() and (work / "ended").exists() and not (work / "follower").exists()
    assert failed.driver_pid and not process_alive(failed.driver_pid)
    assert '"worker_pid": 0' in (work / "job.json").read_text()
