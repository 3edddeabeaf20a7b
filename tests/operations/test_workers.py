"""
Jobs in real worker processes (``manage.py run_jobs`` started by ``job_workers``) on the test run's databases: a job
queued while no worker runs is run by one started later (a web restart loses nothing) and its progress shows through
the API while it runs; two workers never run the same job; kill -9 of a worker or of a Spark driver leaves a job that
is settled (errored) or failed with its verified units, and resuming it finishes the rest; SIGTERM to a worker hands
its running driver over and the worker exits, the driver runs on and a second worker adopts it (its cancel, the kill
-9 of the adopted driver or of the adopting worker handled as for a driver of its own); cancel stops the driver,
removes the staging and swaps nothing.

These tests commit (``transaction=True``) on the console's database only; they never write a metastore.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import transaction
from django.test import override_settings
from django.urls import reverse
from django_tasks_db.models import DBTaskResult

from catalog_admin.errors import ApplicationError, ErrorCode
from operations.choices import JobState
from operations.models import AuditRecord, Job
from operations.services.jobs import job_cancel, job_resume
from operations.services.spark_jobs import enqueue_spark_job
from operations.services.stuck_jobs import settle_stuck_jobs
from operations.spark.entry import process_alive
from operations.tasks import run_job_task
from tests.fixtures.factories import make_user, token_client
from tests.fixtures.spark_jobs import data_directories, expected_checksums
from tests.fixtures.workers import Worker, wait_for

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True, databases=["default"]),
    pytest.mark.usefixtures("restore_roles"),
]
StartWorker = Callable[..., Worker]


def queued_checksum(locations: list[str], **plan: Any) -> Job:
    """A committed checksum job (its task enqueued on commit)."""
    with transaction.atomic():
        return enqueue_spark_job(program="checksum", plan={"directories": locations, **plan}, actor="test")


def job_now(job: Job) -> Job:
    return Job.objects.get(pk=job.pk)


def verified_units(job: Job, at_least: int = 1) -> Job | None:
    """The job once it is running and has verified ``at_least`` units (None before)."""
    current = job_now(job)
    return current if current.state == JobState.RUNNING and len(current.completed) >= at_least else None


def test_a_job_queued_while_no_worker_runs_is_run_by_a_worker_started_later(
    job_workers: StartWorker, tmp_path: Path
) -> None:
    """The job and its task are rows: nothing is lost between the web process that queued them and a worker that
    starts afterwards; the API shows the job's progress while it runs."""
    # given: queued by the "web" process; no worker yet
    locations = data_directories(tmp_path / "data", count=3)
    job = queued_checksum(locations, pause_seconds=1)
    assert job_now(job).state == "queued"
    assert DBTaskResult.objects.get().status == "READY"
    viewer = token_client(make_user("viewer", "viewer"))
    path = reverse("operations_api:job-detail", args=[job.pk])

    # when: a worker process starts
    worker = job_workers("late")
    running = wait_for(
        lambda: (shown := viewer.get(path).json())["state"] == "running" and shown["partitions_total"] and shown,
        "the API to show the job running with its totals",
    )
    done = wait_for(lambda: (shown := viewer.get(path).json())["done"] and shown, "the job to finish")

    # then
    assert (running["partitions_total"], running["files_total"]) == (3, 9)
    assert running["spark_app_id"].startswith("local-") and running["spark_ui_url"].startswith("http://")
    assert (done["state"], done["error"], done["attempts"]) == ("succeeded", "", 1)
    assert done["worker"].endswith(f":{worker.process.pid}")
    assert done["result"]["directories"] == expected_checksums(locations)
    assert (done["partitions_done"], done["files_done"], done["bytes_done"]) == (3, 9, done["bytes_total"])
    assert done["log_tail"]
    assert DBTaskResult.objects.get().status == "SUCCESSFUL"


def test_two_workers_never_run_the_same_job(job_workers: StartWorker) -> None:
    """Eight jobs, each with two tasks (a retried enqueue): two workers take the tasks with SKIP LOCKED and claim each
    job with a guarded update, so every job is claimed exactly once. (The jobs are of a kind no worker knows: each
    fails at once, which needs no metastore and no Spark.)"""
    # given
    with transaction.atomic():
        jobs = [Job.objects.create(kind="no_such_kind") for _ in range(8)]
        for job in jobs * 2:
            run_job_task.enqueue(job.pk)

    # when
    workers = [job_workers("a"), job_workers("b")]
    wait_for(lambda: not DBTaskResult.objects.exclude(status="SUCCESSFUL").exists(), "the workers to run all 16 tasks")

    # then
    claimed = list(Job.objects.values_list("attempts", "state", "error", "worker"))
    assert [(attempts, state) for attempts, state, _, _ in claimed] == [(1, "failed")] * 8
    assert {error for _, _, error, _ in claimed} == {"No worker runs jobs of kind 'no_such_kind'."}
    pids = {f":{worker.process.pid}" for worker in workers}
    assert all(any(name.endswith(pid) for pid in pids) for *_, name in claimed)
    assert DBTaskResult.objects.count() == 16


def test_kill_9_of_the_worker_ends_its_driver_and_the_settled_job_resumes_from_its_verified_units(
    job_workers: StartWorker, tmp_path: Path
) -> None:
    """The driver's watchdog ends it when its worker dies; the silent job is settled as errored with the units it
    verified; resumed, a new worker's run skips them and checksums only the rest."""
    # given: a job past its first directory
    locations = data_directories(tmp_path / "data", count=4)
    job = queued_checksum(locations, pause_seconds=2)
    first = job_workers("first")
    running = wait_for(lambda: verified_units(job), "the first verified directory")
    driver = running.driver_pid

    # when: kill -9 of the worker
    first.kill(signal.SIGKILL)

    # then: its driver goes too, and the job is silent, then settled
    wait_for(lambda: not process_alive(driver), "the orphaned driver to end")
    [settled] = settle_stuck_jobs(older_than=0)
    assert (settled.job_id, settled.outcome) == (job.pk, "errored")
    failed = job_now(job)
    done_before = list(failed.completed)
    assert failed.state == "errored" and 1 <= len(done_before) < 4
    assert AuditRecord.objects.filter(action="settle_job", outcome="errored").count() == 1

    # when: resumed, and a new worker runs it
    job_resume(job=failed, user=make_user("operator", "admin"))
    job_workers("second")
    finished = wait_for(lambda: (current := job_now(job)).is_done and current, "the resumed job to finish")

    # then
    assert (finished.state, finished.attempts, finished.completed) == ("succeeded", 2, locations)
    assert finished.result["skipped"] == sorted(done_before)
    rest = [location for location in locations if location not in done_before]
    assert finished.result["directories"] == expected_checksums(rest)


def test_sigterm_hands_the_running_driver_over_and_a_second_worker_adopts_it(
    job_workers: StartWorker, tmp_path: Path
) -> None:
    """SIGTERM: the worker does not wait for the job nor stop its driver; it hands the job over and exits. The driver
    runs on alone (its progress file keeps advancing, the staging kept); a second worker adopts it: the same driver
    and attempt, followed to its manifest."""
    # given: a running job past its first directory, with a staging directory in the metastore's warehouse
    staging = _staging("sigterm")
    locations = data_directories(tmp_path / "data", count=5)
    job = queued_checksum(locations, pause_seconds=2, staging=f"file:{staging}", metastore=settings.DEFAULT_METASTORE)
    first = job_workers("first")
    running = wait_for(lambda: verified_units(job), "the first verified directory")

    # when
    os.kill(first.process.pid, signal.SIGTERM)
    first.process.wait(timeout=120)  # a guard only: the worker exits within a poll of its runner

    # then: handed over, the driver alive after its worker exited, its progress advancing with no worker
    handed = job_now(job)
    assert (handed.state, handed.attempts, handed.worker, handed.driver_pid) == ("queued", 1, "", running.driver_pid)
    assert handed.adoption["pid"] == running.driver_pid and handed.adoption["program"] == "checksum"
    assert process_alive(running.driver_pid) and staging.is_dir()
    assert "runs on, queued for another worker to adopt it" in " ".join(_log(handed))
    progress = Path(handed.adoption["work"]) / "progress.jsonl"
    read = handed.adoption["offset"]
    wait_for(lambda: progress.stat().st_size > read, "the handed-over driver's progress to advance")

    # when: another worker starts
    second = job_workers("second")
    finished = wait_for(lambda: (current := job_now(job)).is_done and current, "the adopted job to finish")

    # then: one driver did it all, followed to its end by the second worker
    assert (finished.state, finished.attempts, finished.completed) == ("succeeded", 1, locations), finished.error
    assert (finished.driver_pid, finished.adoption) == (running.driver_pid, None)
    assert finished.worker.endswith(f":{second.process.pid}")
    assert finished.result["skipped"] == [] and finished.result["directories"] == expected_checksums(locations)
    assert (finished.partitions_done, finished.files_done) == (5, 15)
    assert any(line.startswith("Adopted the Spark driver") for line in _log(finished))
    shutil.rmtree(staging)


def test_cancel_of_an_adopted_driver_stops_it_and_removes_the_staging(job_workers: StartWorker, tmp_path: Path) -> None:
    """The adopter honours a cancel: it ends the driver's process group (not its child), removes the staging and
    ends the job cancelled."""
    # given: a job handed over by a stopped worker and adopted by a second
    staging = _staging("adopted_cancel")
    (staging / "part=0" / "copy-00000").write_bytes(b"half a copy")
    locations = data_directories(tmp_path / "data", count=6)
    job = queued_checksum(locations, pause_seconds=2, staging=f"file:{staging}", metastore=settings.DEFAULT_METASTORE)
    driver = _handed_over(job, job_workers)
    job_workers("second")
    wait_for(lambda: any(line.startswith("Adopted") for line in _log(job)), "the second worker to adopt the driver")
    admin = token_client(make_user("operator", "admin"))

    # when
    answer = admin.post(reverse("operations_api:job-cancel", args=[job.pk]))
    cancelled = wait_for(lambda: (current := job_now(job)).is_done and current, "the adopter to stop the driver")

    # then
    assert answer.status_code == 202
    assert (cancelled.state, cancelled.result, cancelled.adoption) == ("cancelled", None, None)
    assert not process_alive(driver) and not staging.exists()
    assert {"The driver was stopped", f"Staging file:{staging} removed"} <= set(_log(cancelled))


def test_kill_9_of_an_adopted_driver_fails_the_job_and_resume_finishes_from_its_verified_units(
    job_workers: StartWorker, tmp_path: Path
) -> None:
    # given: a driver handed over and adopted
    locations = data_directories(tmp_path / "data", count=5)
    job = queued_checksum(locations, pause_seconds=2)
    driver = _handed_over(job, job_workers)
    job_workers("second")
    wait_for(lambda: any(line.startswith("Adopted") for line in _log(job)), "the second worker to adopt the driver")

    # when: kill -9 of the driver's process group
    os.killpg(driver, signal.SIGKILL)
    failed = wait_for(lambda: (current := job_now(job)).is_done and current, "the adopter to notice")

    # then: failed with its verified units, resumable
    assert failed.state == "failed" and failed.error.startswith("The Spark driver ended without a manifest")
    assert 1 <= len(failed.completed) < 5 and failed.result is None and failed.adoption is None

    # when
    job_resume(job=failed, user=make_user("operator", "admin"))
    finished = wait_for(lambda: (current := job_now(job)).is_done and current, "the resumed job to finish")

    # then: a new attempt that skipped the verified units
    assert (finished.state, finished.attempts, finished.completed) == ("succeeded", 2, locations), finished.error
    assert finished.result["skipped"] == sorted(failed.completed)
    rest = [location for location in locations if location not in failed.completed]
    assert finished.result["directories"] == expected_checksums(rest)


def test_kill_9_of_the_adopting_worker_ends_the_driver_and_the_settled_job_resumes(
    job_workers: StartWorker, tmp_path: Path
) -> None:
    """The driver's watchdog follows the worker that adopted it: that worker killed -9, the driver ends too (it never
    runs beside the resumed attempt); the silent job is settled errored and resumes from its verified units."""
    # given
    locations = data_directories(tmp_path / "data", count=5)
    job = queued_checksum(locations, pause_seconds=2)
    driver = _handed_over(job, job_workers)
    second = job_workers("second")
    wait_for(lambda: any(line.startswith("Adopted") for line in _log(job)), "the second worker to adopt the driver")

    # when
    second.kill(signal.SIGKILL)

    # then
    wait_for(lambda: not process_alive(driver), "the adopted driver to end with its worker")
    [settled] = settle_stuck_jobs(older_than=0)
    assert (settled.job_id, settled.outcome) == (job.pk, "errored")
    errored = job_now(job)
    assert 1 <= len(errored.completed) < 5

    # when
    job_resume(job=errored, user=make_user("operator", "admin"))
    job_workers("third")
    finished = wait_for(lambda: (current := job_now(job)).is_done and current, "the resumed job to finish")

    # then
    assert (finished.state, finished.attempts, finished.completed) == ("succeeded", 2, locations), finished.error
    assert finished.result["skipped"] == sorted(errored.completed)


def _staging(name: str) -> Path:
    """A staging directory in the default metastore's warehouse (a discard may remove it)."""
    warehouse = Path(next(c.warehouse for c in settings.METASTORE_CONFIGS if c.name == settings.DEFAULT_METASTORE))
    staging = warehouse / f"_staging_{name}_test_{os.getpid()}"
    (staging / "part=0").mkdir(parents=True)
    return staging


def _handed_over(job: Job, job_workers: StartWorker) -> int:
    """Run ``job`` in a first worker until it verified a directory, then SIGTERM it: the driver's pid, handed over."""
    first = job_workers("first")
    running = wait_for(lambda: verified_units(job), "the first verified directory")
    os.kill(first.process.pid, signal.SIGTERM)
    first.process.wait(timeout=120)
    assert job_now(job).adoption is not None
    return int(running.driver_pid)


def _log(job: Job) -> list[str]:
    return list(job_now(job).log_entries.values_list("message", flat=True))


def test_kill_9_of_the_driver_fails_the_job_with_its_verified_units_and_resume_finishes_it(
    job_workers: StartWorker, tmp_path: Path
) -> None:
    # given
    locations = data_directories(tmp_path / "data", count=3)
    job = queued_checksum(locations, pause_seconds=2)
    job_workers("w")
    running = wait_for(lambda: verified_units(job), "the first verified directory")

    # when: kill -9 of the driver's process group (spark-submit's JVM and the Python driver)
    os.killpg(running.driver_pid, signal.SIGKILL)
    failed = wait_for(lambda: (current := job_now(job)).is_done and current, "the worker to notice")

    # then
    assert failed.state == "failed" and failed.error.startswith("The Spark driver exited with -9")
    assert 1 <= len(failed.completed) < 3 and failed.result is None

    # when
    job_resume(job=failed, user=make_user("operator", "admin"))
    finished = wait_for(lambda: (current := job_now(job)).is_done and current, "the resumed job to finish")

    # then
    assert (finished.state, finished.attempts, finished.completed) == ("succeeded", 2, locations)
    assert finished.result["skipped"] == sorted(failed.completed)


def test_cancel_stops_the_driver_removes_the_staging_and_swaps_nothing(
    job_workers: StartWorker, tmp_path: Path
) -> None:
    """Through the API: 202 at once; within a second the worker stops the driver's process group, removes
    ``plan["staging"]`` (inside a governed root of the plan's metastore) and ends the job cancelled."""
    # given: a running job with a staging directory in the metastore's warehouse
    warehouse = Path(next(c.warehouse for c in settings.METASTORE_CONFIGS if c.name == settings.DEFAULT_METASTORE))
    staging = warehouse / f"_staging_job_test_{os.getpid()}"
    (staging / "part=0").mkdir(parents=True)
    (staging / "part=0" / "copy-00000").write_bytes(b"half a copy")
    locations = data_directories(tmp_path / "data", count=4)
    job = queued_checksum(locations, pause_seconds=3, staging=f"file:{staging}", metastore=settings.DEFAULT_METASTORE)
    job_workers("w")
    running = wait_for(lambda: verified_units(job), "the first verified directory")
    admin = token_client(make_user("operator", "admin"))

    # when
    answer = admin.post(reverse("operations_api:job-cancel", args=[job.pk]))
    cancelled = wait_for(lambda: (current := job_now(job)).is_done and current, "the worker to stop the driver")

    # then
    assert answer.status_code == 202 and answer.json()["state"] == "running"
    assert (cancelled.state, cancelled.result, cancelled.cancel_requested_by) == ("cancelled", None, "operator")
    assert not process_alive(running.driver_pid)
    assert not staging.exists()
    messages = list(cancelled.log_entries.values_list("message", flat=True))
    assert f"Staging file:{staging} removed" in messages
    assert "The driver was stopped" in messages and cancelled.message == "Cancelled by operator"
    assert AuditRecord.objects.get(action="cancel_job").actor == "operator"


# Another host ------------------------------------------------------------------------------------------------------
# A worker becomes one of another host through CATALOG_WORKER_HOST; the work location is a local directory both reach
# (as a shared mount would be), so what differs is only what the successor can verify: not the driver's process.

ELSEWHERE = {
    "CATALOG_WORKER_HOST": "elsewhere.example", "CATALOG_JOB_ADOPTION_RETRY_SECONDS": "1",
    "CATALOG_SPARK_LEASE_SECONDS": "10",
}  # fmt: skip


def _follower(work: Path) -> dict[str, Any]:
    try:
        return dict(json.loads((work / "follower").read_text()))
    except (FileNotFoundError, ValueError):
        return {}


def _followed_elsewhere(job: Job, job_workers: StartWorker) -> tuple[int, Path, Worker]:
    """Hand ``job``'s driver over on this host, then let a worker of another host follow it until it renewed its
    lease: the driver's pid, its work location and that worker."""
    driver = _handed_over(job, job_workers)
    work = Path(job_now(job).adoption["work"])
    elsewhere = job_workers("elsewhere", env=ELSEWHERE)
    wait_for(
        lambda: (record := _follower(work)).get("host") == "elsewhere.example" and record.get("beat", 0) >= 2,
        "the other host's worker to renew its lease",
    )
    return driver, work, elsewhere


def test_a_worker_on_another_host_follows_the_handed_over_driver_under_a_lease_and_hands_it_on_again(
    job_workers: StartWorker, tmp_path: Path
) -> None:
    """The successor cannot see nor signal the driver, so it follows it through the work location under a lease:
    the driver runs on (its progress read there), and when that worker stops too it hands the driver on; a worker on
    the driver's host adopts it and the job ends in its first attempt with every directory verified."""
    # given: a driver handed over on this host, followed from another
    locations = data_directories(tmp_path / "data", count=8)
    job = queued_checksum(locations, pause_seconds=2)
    driver, work, elsewhere = _followed_elsewhere(job, job_workers)
    home = job_now(job).adoption["host"]

    # then: followed, not stopped; its progress comes through the work location
    following = job_now(job)
    assert following.state == "running" and following.worker.startswith("elsewhere.example:")
    assert _follower(work)["lease"] == 10 and process_alive(driver) and not (work / "cancel").exists()
    units = len(following.completed)
    wait_for(lambda: len(job_now(job).completed) > units, "a directory verified while followed from elsewhere")

    # when: that worker stops too
    elsewhere.kill(signal.SIGTERM)

    # then: handed on, naming the driver's own host
    handed = job_now(job)
    assert (handed.state, handed.adoption["host"], handed.adoption["pid"]) == ("queued", home, driver)
    assert _follower(work)["pid"] == 0 and process_alive(driver)

    # when: a worker of the driver's host takes it
    job_workers("home")
    finished = wait_for(lambda: (current := job_now(job)).is_done and current, "the job to finish")

    # then: one attempt, every directory, no stop asked
    assert (finished.state, finished.attempts, finished.completed) == ("succeeded", 1, locations), finished.error
    assert finished.result["directories"] == expected_checksums(locations) and finished.adoption is None
    assert not (work / "cancel").exists() and json.loads((work / "ended").read_text())["state"] == "succeeded"
    log = " ".join(_log(finished))
    assert "under a lease of 10 s" in log and "Adopted the Spark driver" in log


def test_a_driver_whose_follower_on_another_host_dies_stops_itself_when_the_lease_lapses_and_resume_finishes_it(
    job_workers: StartWorker, tmp_path: Path
) -> None:
    """kill -9 of the worker following from another host: nobody renews the lease, so the driver's watchdog ends its
    process group and says why in its exit marker; the silent job is settled and resumed from its verified units."""
    # given
    locations = data_directories(tmp_path / "data", count=8)
    job = queued_checksum(locations, pause_seconds=2)
    driver, work, elsewhere = _followed_elsewhere(job, job_workers)

    # when
    elsewhere.kill()

    # then: the driver stopped itself and confirmed it
    ended = wait_for(lambda: (work / "ended").exists() and json.loads((work / "ended").read_text()), "the lease")
    assert ended["state"] == "stopped" and not process_alive(driver)
    assert "its follower on elsewhere.example (pid " in ended["detail"]
    assert "did not renew its lease of 10 s" in ended["detail"]
    [settled] = settle_stuck_jobs(older_than=0)
    errored = job_now(job)
    assert (settled.job_id, settled.outcome, errored.state) == (job.pk, "errored", "errored")
    assert 1 <= len(errored.completed) < 8

    # when: resumed on this host
    job_resume(job=errored, user=make_user("operator", "admin"))
    job_workers("third")
    finished = wait_for(lambda: (current := job_now(job)).is_done and current, "the resumed job to finish")

    # then
    assert (finished.state, finished.attempts, finished.completed) == ("succeeded", 2, locations), finished.error
    assert finished.result["skipped"] == sorted(errored.completed)


def test_cancel_of_a_driver_followed_from_another_host_stops_it_through_its_work_location(
    job_workers: StartWorker, tmp_path: Path
) -> None:
    """The follower cannot signal the driver: it writes the stop request, the driver's watchdog ends its process
    group and confirms it, and only then is the job cancelled and its staging removed."""
    # given
    staging = _staging("followed")
    locations = data_directories(tmp_path / "data", count=8)
    job = queued_checksum(locations, pause_seconds=2, staging=f"file:{staging}", metastore=settings.DEFAULT_METASTORE)
    driver, work, _ = _followed_elsewhere(job, job_workers)

    # when
    job_cancel(job=job_now(job), user=make_user("operator", "admin"))
    cancelled = wait_for(lambda: (current := job_now(job)).is_done and current, "the follower to cancel it")

    # then
    assert (cancelled.state, cancelled.adoption) == ("cancelled", None), cancelled.error
    assert json.loads((work / "ended").read_text())["state"] == "stopped" and not process_alive(driver)
    assert not staging.exists() and "The driver confirmed it stopped" in _log(cancelled)


def test_a_driver_that_stops_beating_is_let_go_and_keeps_resume_and_cancel_refused_until_it_confirms(
    job_workers: StartWorker, tmp_path: Path
) -> None:
    """A driver that writes nothing more (its process group frozen) is not followed for ever: once its beat stayed
    the same for the lease, the follower stops renewing it and waits for the exit marker; unconfirmed, the job fails
    saying the driver may still run, and resume and cancel from another host are refused (nothing changed). Once
    the driver runs again its watchdog sees the lease lapsed, ends its group and confirms; resume then runs the rest."""
    # given: a driver followed from another host with a short wait, then frozen
    staging = _staging("unconfirmed")
    locations = data_directories(tmp_path / "data", count=8)
    job = queued_checksum(locations, pause_seconds=2, staging=f"file:{staging}", metastore=settings.DEFAULT_METASTORE)
    driver = _handed_over(job, job_workers)
    work = Path(job_now(job).adoption["work"])
    os.killpg(driver, signal.SIGSTOP)
    try:
        job_workers("elsewhere", env={**ELSEWHERE, "CATALOG_SPARK_STOP_WAIT_SECONDS": "3"})
        failed = wait_for(lambda: (current := job_now(job)).is_done and current, "the follower to let it go")

        # then
        assert failed.state == "failed" and "stopped beating for 10 s" in failed.error, failed.error
        assert "has not confirmed it stopped within 13 s" in failed.error
        assert failed.adoption is not None and process_alive(driver)

        # when: resume and cancel from a console process on another host
        operator = make_user("operator", "admin")
        with override_settings(CATALOG_WORKER_HOST="elsewhere.example"):
            with pytest.raises(ApplicationError) as resumed:
                job_resume(job=failed, user=operator)
            with pytest.raises(ApplicationError) as cancelled:
                job_cancel(job=failed, user=operator)

        # then: both refused naming the driver, nothing changed
        assert resumed.value.code == cancelled.value.code == ErrorCode.INVALID_STATE
        assert f"(pid {driver} on " in resumed.value.message and "has not confirmed it" in resumed.value.message
        assert job_now(job).state == "failed" and job_now(job).adoption is not None and staging.is_dir()
    finally:
        os.killpg(driver, signal.SIGCONT)

    # when: the driver runs again: its lease lapsed (or the stop request the refusals wrote is there)
    wait_for(lambda: (work / "ended").exists(), "the driver to stop and confirm it")
    assert not process_alive(driver)
    with override_settings(CATALOG_WORKER_HOST="elsewhere.example"):
        job_resume(job=job_now(job), user=make_user("operator2", "admin"))
    finished = wait_for(lambda: (current := job_now(job)).is_done and current, "the resumed job to finish")

    # then
    assert (finished.state, finished.attempts, finished.completed) == ("succeeded", 2, locations), finished.error
    shutil.rmtree(staging)


def test_a_worker_that_cannot_read_the_hand_overs_record_in_the_work_location_does_not_claim_the_job(
    job_workers: StartWorker, tmp_path: Path
) -> None:
    """A successor must read, in the driver's work location, the follower record the stopping worker wrote (the same
    token): what it reads under that path is not the driver's location otherwise (a local directory of its own
    host). It leaves the job queued and tries again; once it reads the record, it claims the job."""
    # given: a handed-over driver whose follower record reads differently (as another host's directory would)
    locations = data_directories(tmp_path / "data", count=6)
    job = queued_checksum(locations, pause_seconds=2)
    driver = _handed_over(job, job_workers)
    follower = Path(job_now(job).adoption["work"]) / "follower"
    record = follower.read_text()
    follower.write_text(json.dumps({**json.loads(record), "token": "another-location"}))

    # when
    job_workers("elsewhere", env=ELSEWHERE)
    wait_for(lambda: any("left the handed-over job queued" in line for line in _log(job)), "the worker to refuse")

    # then: not claimed, the driver untouched
    refused = job_now(job)
    assert (refused.state, refused.worker, refused.adoption is not None) == ("queued", "", True)
    assert "does not hold the hand-over's follower record" in " ".join(_log(refused))
    assert process_alive(driver) and not (follower.parent / "cancel").exists()

    # when: the record reads as written
    follower.write_text(record)
    ended = wait_for(lambda: (current := job_now(job)).is_done and current, "the worker to claim it")

    # then: claimed and followed to the end, in the same attempt
    assert (ended.state, ended.attempts, ended.completed) == ("succeeded", 1, locations), ended.error
    # the driver writes its outcome just before its process exits: its exit is waited for, bounded, not raced
    assert wait_for(lambda: not process_alive(driver), "the driver to exit", timeout=30)
    assert not (follower.parent / "cancel").exists()


def test_a_worker_on_another_host_adopts_the_manifest_of_a_driver_that_finished_after_the_hand_over(
    job_workers: StartWorker, tmp_path: Path
) -> None:
    """A handed-over driver that finished alone left its manifest (written after its session stopped, so nothing
    writes any more): the successor on another host takes it as the run's result, no new run needed."""
    # given
    locations = data_directories(tmp_path / "data", count=3)
    job = queued_checksum(locations, pause_seconds=1)
    _handed_over(job, job_workers)
    work = Path(job_now(job).adoption["work"])
    wait_for(lambda: (work / "ended").exists(), "the handed-over driver to finish alone")

    # when
    job_workers("elsewhere", env=ELSEWHERE)
    finished = wait_for(lambda: (current := job_now(job)).is_done and current, "the other host's worker to end it")

    # then
    assert (finished.state, finished.attempts, finished.adoption) == ("succeeded", 1, None), finished.error
    assert finished.result["directories"] == expected_checksums(locations)
    assert json.loads((work / "ended").read_text())["state"] == "succeeded" and not (work / "cancel").exists()
    assert any("its manifest adopted" in line for line in _log(finished))
