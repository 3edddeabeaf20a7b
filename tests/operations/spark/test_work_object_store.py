"""
A Spark job's work location on a real S3 server (SeaweedFS): progress events written as objects (nothing appended)
and read back in order, once each; the manifest one object; a cancel request an object the driver itself acts on.
End to end, a checksum job on ``local[2]`` through ``spark-submit`` with ``CATALOG_SPARK_WORK_DIR=s3a://…`` keeps
nothing of its progress or manifest on the local disk, and a driver no worker can signal stops on the request alone.
A follower on another host and the driver keep their lease through the store alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from operations.services.jobs import run_job
from operations.services.spark_jobs import enqueue_spark_job
from operations.spark import lease as lease_module
from operations.spark.engine import SparkEngine, launch_driver, read_manifest, stop_driver, write_driver_files
from operations.spark.entry import _Following
from operations.spark.lease import DriverBeat, FollowerLease
from operations.spark.work import PROGRESS_FILE, ProgressReader, WorkDir
from tests.fixtures.object_store import S3Server
from tests.fixtures.spark_jobs import data_directories, expected_checksums
from tests.fixtures.workers import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


def work_on(server: S3Server, *parts: str) -> WorkDir:
    return WorkDir(server.location("spark-jobs", *parts), server.options)


def test_progress_events_are_objects_read_back_in_order_once(s3_filesystems: S3Server) -> None:
    """Each event an object of its own; the reader returns the new ones in their order, and nothing twice."""
    # given
    work = work_on(s3_filesystems, "events")
    work.prepare()
    report = work.reporter()
    reader = ProgressReader(work)

    # when
    for number in range(1, 12):  # past 9, so the objects' names must sort as numbers
        report({"files_done": number})
    first = [event["files_done"] for event in reader.read()]
    report({"unit_done": "dt=1"})
    second = list(reader.read())

    # then
    assert first == list(range(1, 12))
    assert [event.get("unit_done") for event in second] == ["dt=1"]
    assert list(reader.read()) == []
    listed = work.filesystem().list_files(work.location) or []
    assert {entry.relative.split("/")[0] for entry in listed} == {"progress"}


def test_the_manifest_and_a_cancel_request_are_objects(s3_filesystems: S3Server) -> None:
    """Written whole, read back; a fresh attempt (``prepare``) removes what a previous one left."""
    # given
    work = work_on(s3_filesystems, "manifest")
    work.prepare()

    # when
    before = (work.read_manifest(), work.cancel_requested())
    work.write_manifest({"files": 3})
    work.request_cancel()

    # then
    assert before == (None, False)
    assert (work.read_manifest(), work.cancel_requested()) == ({"files": 3}, True)
    work.prepare()
    assert (work.read_manifest(), work.cancel_requested()) == (None, False)


def test_a_checksum_job_keeps_its_progress_and_manifest_on_the_object_store(
    s3_filesystems: S3Server,
    settings,
    tmp_path: Path,  # noqa: ANN001
) -> None:
    """Through spark-submit on local[2]: the job's counters and manifest come from the S3 work location; the local
    launch directory holds only the driver's input and log."""
    # given
    settings.CATALOG_SPARK_MASTER = "local[2]"
    settings.CATALOG_SPARK_WORK_DIR = s3_filesystems.location("spark-jobs", "e2e")
    settings.CATALOG_SPARK_LOCAL_DIR = tmp_path / "launch"
    locations = data_directories(tmp_path / "data")
    job = enqueue_spark_job(program="checksum", plan={"directories": locations}, actor="test")

    # when
    job = run_job(job.pk)

    # then
    assert (job.state, job.error) == ("succeeded", "")
    assert job.result["directories"] == expected_checksums(locations)
    assert (job.partitions_done, job.files_done, job.files_total) == (3, 9, 9)
    assert job.completed == locations and job.spark_app_id.startswith("local-")
    work = WorkDir(f"{settings.CATALOG_SPARK_WORK_DIR}/job-{job.pk}/attempt-1", s3_filesystems.options)
    assert work.read_manifest() == job.result
    launch = tmp_path / "launch" / f"job-{job.pk}" / "attempt-1"
    assert sorted(p.name for p in launch.iterdir()) == ["catalog_admin_spark.zip", "driver.log", "job.json"]
    assert s3_filesystems.secret_key not in (launch / "job.json").read_text()  # credentials stay in the environment


def test_a_driver_no_worker_signals_stops_on_the_cancel_request_in_its_work_location(
    s3_filesystems: S3Server, tmp_path: Path
) -> None:
    """As in cluster deploy mode: no worker pid to watch, nobody to signal the driver; the request object alone ends
    it before it finishes, and it writes no manifest but its exit marker on the store."""
    # given: a slow checksum (3 s after each directory), no worker pid
    engine = SparkEngine(master="local[1]")
    work = work_on(s3_filesystems, "cancel")
    plan = {"directories": data_directories(tmp_path / "data", count=5), "pause_seconds": 3}
    files = write_driver_files(
        tmp_path / "launch", engine=engine, program="checksum", plan=plan, app_name="cancel me", worker_pid=0,
        work=work,
    )  # fmt: skip
    driver = launch_driver(engine, files)
    reader = ProgressReader(work)
    events: list[dict] = []
    try:
        wait_for(lambda: events.extend(reader.read()) or any("unit_done" in e for e in events), "a first unit")

        # when
        work.request_cancel()

        # then
        assert driver.wait(timeout=120) != 0
        assert read_manifest(files) is None
        ended = wait_for(work.ended, "its exit marker, written once the rest of its group is gone")
        assert ended["state"] == "stopped"
        assert not (tmp_path / "launch" / PROGRESS_FILE).exists()
        done = [e["unit_done"] for e in [*events, *reader.read()] if "unit_done" in e]
        assert 0 < len(done) < 5
    finally:
        stop_driver(driver)


def test_the_lease_and_the_drivers_beat_are_objects_each_side_reads(
    s3_filesystems: S3Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A follower on another host and the driver's watchdog share only the store: the driver's beats reach the
    follower, the follower's renewals keep the watchdog going, and once they stop it does not go on."""
    # given: a driver handed over, followed from elsewhere; the lease clock moved by hand
    now = [1000.0]
    monkeypatch.setattr(lease_module, "lease_clock", lambda: now[0])
    work = work_on(s3_filesystems, "lease")
    work.prepare()
    work.write_follower(host="driver.example", pid=0, token="t")
    watchdog, beat = _Following(0, "driver.example"), DriverBeat(work)
    assert watchdog.goes_on(work) and watchdog.handed_over
    lease = FollowerLease(work, host="elsewhere.example", pid=42, seconds=10)

    # when: both beat every 2.5 s for half a minute
    verdicts = []
    for _ in range(12):
        now[0] += 2.5
        beat.beat()
        lease.renew()
        verdicts.append((watchdog.goes_on(work), lease.driver_silent()))

    # then
    assert verdicts == [(True, False)] * 12
    assert work.alive()["beat"] == 12 and work.follower()["host"] == "elsewhere.example"  # type: ignore[index]

    # when: neither beats for longer than the lease
    now[0] += 10.5

    # then
    assert not watchdog.goes_on(work) and lease.driver_silent()
    assert "did not renew its lease of 10 s" in watchdog.gone
