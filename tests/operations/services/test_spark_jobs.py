"""
Spark jobs without Spark: who may cancel and resume which job, what each does to the job (audited), and how the API
and the job page show a job's progress. The driver itself runs in the ``slow`` tests
(``tests/operations/test_workers.py``, ``tests/operations/spark/``).
"""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django_tasks_db.models import DBTaskResult
from rest_framework.test import APIClient

from catalog_admin.errors import ApplicationError, ErrorCode
from operations.choices import JobKind, JobState
from operations.housekeeping import _stuck_jobs
from operations.models import AuditRecord, Job
from operations.services.jobs import job_cancel, job_resume, worker_host
from operations.services.spark_jobs import enqueue_spark_job
from tests.fixtures.factories import html

pytestmark = pytest.mark.django_db
PLAN = {"directories": ["file:/data/a", "file:/data/b"]}


def spark_job(state: str = JobState.QUEUED, **fields) -> Job:
    job = enqueue_spark_job(program="checksum", plan=PLAN, actor="test")
    Job.objects.filter(pk=job.pk).update(state=state, **fields)
    return Job.objects.get(pk=job.pk)


def test_an_unknown_program_is_refused_and_nothing_is_queued() -> None:
    with pytest.raises(ApplicationError) as caught:
        enqueue_spark_job(program="../../etc/passwd", plan={}, actor="test")
    assert (caught.value.code, caught.value.details) == (ErrorCode.INVALID_PARAMETER, {"field": "program"})
    assert not Job.objects.exists()


def test_cluster_deploy_mode_with_a_local_work_dir_is_refused_and_nothing_is_queued(settings) -> None:  # noqa: ANN001
    """A driver on the cluster could not write progress or a manifest the console reads: refused naming the setting."""
    # given
    settings.CATALOG_SPARK_MASTER, settings.CATALOG_SPARK_DEPLOY_MODE = "yarn", "cluster"

    # when
    with pytest.raises(ApplicationError) as caught:
        enqueue_spark_job(program="checksum", plan=PLAN, actor="test")

    # then
    assert caught.value.code == ErrorCode.INVALID_PARAMETER
    assert caught.value.details == {"field": "CATALOG_SPARK_WORK_DIR"}
    assert "CATALOG_SPARK_DEPLOY_MODE=cluster" in caught.value.message and "s3a://" in caught.value.message
    assert not Job.objects.exists()


def test_a_queued_job_is_cancelled_at_once_and_audited(people: dict[str, User]) -> None:
    # given
    job = spark_job()

    # when
    job = job_cancel(job=job, user=people["admin"])

    # then
    assert (job.state, job.cancel_requested_by, job.message) == ("cancelled", "admin", "Cancelled by admin")
    record = AuditRecord.objects.get(action="cancel_job")
    assert (record.actor, record.outcome, record.details["job"]) == ("admin", "cancelled", job.pk)


def test_a_running_job_gets_a_cancel_request_its_worker_acts_on(people: dict[str, User]) -> None:
    """The worker stops the driver; until then the job runs, and a second cancel is refused."""
    # given
    job = spark_job(JobState.RUNNING, started_at=timezone.now())

    # when
    job = job_cancel(job=job, user=people["admin"])

    # then
    assert job.state == "running" and job.cancel_requested_at is not None
    assert AuditRecord.objects.get(action="cancel_job").outcome == "cancel requested"
    with pytest.raises(ApplicationError) as again:
        job_cancel(job=job, user=people["admin"])
    assert again.value.code == ErrorCode.INVALID_STATE


@pytest.mark.parametrize(
    ("who", "state", "kind", "code"),
    [
        ("viewer", JobState.RUNNING, "spark", ErrorCode.PERMISSION_DENIED),
        ("steward", JobState.RUNNING, "spark", ErrorCode.PERMISSION_DENIED),
        ("admin", JobState.SUCCEEDED, "spark", ErrorCode.INVALID_STATE),
        ("admin", JobState.RUNNING, "committing", ErrorCode.INVALID_STATE),
    ],
)
def test_cancel_is_refused_with_the_reason(people: dict[str, User], who: str, state: str, kind: str, code) -> None:
    """Only an admin or the job's requester; only a queued, running or resumable job; never a job past its point of
    no return (its metastore transaction started)."""
    # given
    job = (
        spark_job(state)
        if kind == "spark"
        else Job.objects.create(kind=JobKind.ALTER, state=state, committing_at=timezone.now())
    )

    # when
    with pytest.raises(ApplicationError) as caught:
        job_cancel(job=job, user=people[who])

    # then
    assert caught.value.code == code
    assert Job.objects.get(pk=job.pk).state == state and not AuditRecord.objects.exists()


def test_a_failed_spark_job_resumes_with_its_verified_units(
    people: dict[str, User], django_capture_on_commit_callbacks
) -> None:
    """Queued again with its task; ``completed`` is kept for the program to skip."""
    # given
    job = spark_job(JobState.FAILED, completed=["file:/data/a"], attempts=1, error="The Spark driver exited with -9")

    # when
    with django_capture_on_commit_callbacks(execute=True):
        job = job_resume(job=job, user=people["admin"])

    # then
    assert (job.state, job.completed, job.attempts) == ("queued", ["file:/data/a"], 1)
    assert job.message == "Resumed by admin: 1 unit(s) already verified"
    assert DBTaskResult.objects.filter(task_path="operations.tasks.run_job_task").count() == 1
    record = AuditRecord.objects.get(action="resume_job")
    assert (record.outcome, record.details["completed"]) == ("queued", 1)


def test_only_a_failed_or_errored_job_not_discarded_resumes(people: dict[str, User]) -> None:
    for job in (
        spark_job(JobState.RUNNING),
        spark_job(JobState.SUCCEEDED),
        spark_job(JobState.CANCELLED),
        spark_job(JobState.FAILED, cancel_requested_at=timezone.now()),
    ):
        with pytest.raises(ApplicationError) as caught:
            job_resume(job=job, user=people["admin"])
        assert caught.value.code == ErrorCode.INVALID_STATE


def test_the_api_shows_a_jobs_progress_and_cancels_it(api: dict[str, APIClient], people: dict[str, User]) -> None:
    """Counters, throughput, ETA, the Spark application and the log tail; POST cancel answers 202, a viewer 403."""
    # given
    started = timezone.now() - timedelta(seconds=10)
    job = spark_job(
        JobState.RUNNING, started_at=started, partitions_done=1, partitions_total=2, files_done=3, files_total=6,
        bytes_done=1000, bytes_total=3000, spark_app_id="app-1", spark_ui_url="http://127.0.0.1:4040",
        log_tail="INFO SparkContext: Running Spark", completed=["file:/data/a"], result={"partial": True},
    )  # fmt: skip
    path = reverse("operations_api:job-detail", args=[job.pk])

    # when
    shown = api["viewer"].get(path).json()

    # then
    assert (shown["partitions_done"], shown["partitions_total"], shown["files_done"], shown["bytes_total"]) == (
        1,
        2,
        3,
        3000,
    )
    assert 0 < shown["bytes_per_second"] <= 100  # 1000 bytes in 10 s or more
    assert shown["eta_seconds"] == pytest.approx(2000 / shown["bytes_per_second"], rel=0.05)  # 2000 bytes left
    assert (shown["spark_app_id"], shown["spark_ui_url"]) == ("app-1", "http://127.0.0.1:4040")
    assert shown["result"] is None  # the manifest comes with the finished job only
    assert (shown["log_tail"], shown["completed"], shown["done"]) == (
        "INFO SparkContext: Running Spark",
        ["file:/data/a"],
        False,
    )

    # when
    refused = api["viewer"].post(reverse("operations_api:job-cancel", args=[job.pk]))
    cancelled = api["admin"].post(reverse("operations_api:job-cancel", args=[job.pk]))

    # then
    assert (refused.status_code, refused.json()["code"]) == (403, "permission_denied")
    assert cancelled.status_code == 202 and cancelled.json()["cancel_requested_at"] is not None
    resumed = api["admin"].post(reverse("operations_api:job-resume", args=[job.pk]))
    assert (resumed.status_code, resumed.json()["code"]) == (409, "invalid_state")


def test_the_job_page_shows_the_counters_links_spark_and_polls_until_done(people: dict[str, User]) -> None:
    # given
    job = spark_job(
        JobState.RUNNING,
        partitions_done=1,
        partitions_total=2,
        spark_ui_url="http://127.0.0.1:4040",
        spark_app_id="app-1",
    )
    client = Client()
    client.force_login(people["admin"])

    # when
    page = client.get(reverse("operations:job-detail", args=[job.pk]))
    running = client.get(reverse("operations:job-progress", args=[job.pk]), HTTP_HX_REQUEST="true")
    Job.objects.filter(pk=job.pk).update(state=JobState.SUCCEEDED)
    finished = client.get(reverse("operations:job-progress", args=[job.pk]), HTTP_HX_REQUEST="true")

    # then
    text = html(page)
    assert page.status_code == 200
    assert 'id="job-partitions">1 of 2<' in text
    assert 'href="http://127.0.0.1:4040" id="job-spark-ui"' in text
    assert f'hx-get="{reverse("operations:job-progress", args=[job.pk])}"' in text
    assert '<button type="submit" class="danger">Cancel job</button>' in text
    assert running.status_code == 200
    assert finished.status_code == 286  # htmx stops polling
    assert 'id="job-spark-ui"' not in html(finished)  # the UI is gone with the application
    ended = re.search(r'<span id="job-spark-ended">(.*?)</dd>', html(finished), re.DOTALL).group(1)
    assert "the application ended" in ended
    assert f"job-{job.pk}/attempt-{job.attempts}/driver.log" in ended  # where its log is


@pytest.mark.parametrize("state", [JobState.SUCCEEDED, JobState.CANCELLED])
def test_a_finished_job_offers_no_cancel_or_resume(people: dict[str, User], state: str) -> None:
    """A succeeded or cancelled job is over: its page shows neither action (no disabled buttons explaining that a
    finished job cannot be cancelled)."""
    # given
    job = spark_job(state, spark_app_id="app-1")
    client = Client()
    client.force_login(people["admin"])

    # when
    page = html(client.get(reverse("operations:job-detail", args=[job.pk])))

    # then
    assert 'id="action-cancel-job"' not in page and 'id="action-resume-job"' not in page
    assert 'id="job-actions"' not in page


def test_a_failed_job_offers_resume_and_discard_and_a_viewer_sees_why_not(people: dict[str, User]) -> None:
    """A failed job kept for resuming: the admin gets both actions; a viewer sees them disabled with the reason."""
    # given
    job = spark_job(JobState.FAILED)
    admin, viewer = Client(), Client()
    admin.force_login(people["admin"])
    viewer.force_login(people["viewer"])

    # when
    as_admin = html(admin.get(reverse("operations:job-detail", args=[job.pk])))
    as_viewer = html(viewer.get(reverse("operations:job-detail", args=[job.pk])))

    # then
    assert '<button type="submit" class="">Resume</button>' in as_admin
    assert '<button type="submit" class="danger">Cancel job</button>' in as_admin
    assert f"Only an admin or the job&#x27;s requester can resume job #{job.pk}." in as_viewer


def test_a_failed_job_whose_driver_did_not_confirm_its_stop_says_so_on_its_page(people: dict[str, User]) -> None:
    """A worker of another host asked the handed-over driver to stop and it never confirmed: the page says the driver
    may still run, where, and what resume and cancel wait for; a job without a kept adoption shows nothing of it."""
    # given
    adoption = {"host": "spark-7.example", "pid": 4242, "work": "s3a://ops/spark-jobs/job-1/attempt-1"}
    unconfirmed, plain = spark_job(JobState.FAILED, adoption=adoption), spark_job(JobState.FAILED)
    admin = Client()
    admin.force_login(people["admin"])

    # when
    page = html(admin.get(reverse("operations:job-detail", args=[unconfirmed.pk])))
    other = html(admin.get(reverse("operations:job-detail", args=[plain.pk])))

    # then
    assert 'id="job-driver-unconfirmed"' in page and 'id="job-driver-unconfirmed"' not in other
    assert 'pid 4242 on <span class="mono">spark-7.example</span> was asked to stop' in page
    assert "s3a://ops/spark-jobs/job-1/attempt-1" in page and "Resume and cancel wait for that marker" in page


@pytest.mark.parametrize(
    ("state", "said"),
    [(JobState.SUCCEEDED, "succeeded"), (JobState.CANCELLED, "was cancelled"), (JobState.QUEUED, "is queued")],
)
def test_a_refusal_names_the_jobs_state_in_a_sentence(people: dict[str, User], state: str, said: str) -> None:
    """ "Job #1 succeeded: it cannot be resumed now", not "Job #1 is succeeded"."""
    # given
    job = spark_job(state)

    # when
    with pytest.raises(ApplicationError) as caught:
        job_resume(job=job, user=people["admin"])

    # then
    assert caught.value.message == f"Job #{job.pk} {said}: it cannot be resumed now."


def test_a_spark_job_still_starting_says_spark_is_starting(people: dict[str, User]) -> None:
    """A running job with no unit done yet explains the wait: Spark's start-up, not a stuck job."""
    # given
    starting = spark_job(JobState.RUNNING, message="Starting")
    moving = spark_job(JobState.RUNNING, partitions_done=1, partitions_total=2, progress=50)
    client = Client()
    client.force_login(people["viewer"])

    # when
    first = html(client.get(reverse("operations:job-detail", args=[starting.pk])))
    second = html(client.get(reverse("operations:job-detail", args=[moving.pk])))

    # then
    assert 'id="job-starting"' in first and "Starting Spark" in first
    assert 'id="job-starting"' not in second


def test_a_cancel_from_the_page_by_someone_not_allowed_shows_the_reason(people: dict[str, User]) -> None:
    # given
    job = spark_job(JobState.RUNNING)
    client = Client()
    client.force_login(people["viewer"])

    # when
    response = client.post(reverse("operations:job-cancel", args=[job.pk]))

    # then
    assert response.status_code == 403
    assert f"Only an admin or the job&#x27;s requester can cancel job #{job.pk}." in html(response)
    assert Job.objects.get(pk=job.pk).cancel_requested_at is None


def test_a_jobs_counters_group_numbers_and_use_iec_units(people: dict[str, User]) -> None:
    """29,993 files, not 29993; bytes in KiB/MiB like every other page, not Django's KB/MB."""
    # given
    job = spark_job(JobState.RUNNING, files_done=1200, files_total=29993, bytes_done=1536, bytes_total=134217728)
    client = Client()
    client.force_login(people["viewer"])

    # when
    page = html(client.get(reverse("operations:job-detail", args=[job.pk])))

    # then
    assert 'id="job-files">1,200 of 29,993<' in page
    assert 'id="job-bytes">1.5 KiB of 128.0 MiB<' in page


def test_a_worker_on_the_drivers_host_ends_an_unconfirmed_driver_and_allows_resume_again(
    people: dict[str, User], tmp_path: Path
) -> None:
    """A job ended with its driver not confirmed stopped: the housekeeping of a worker on the driver's host checks
    the process group there (ending it while it runs), forgets the adoption and logs it; a job whose driver is on
    another host is left as it is."""
    # given: a process group standing for the driver (its command line names its launch directory)
    launch = tmp_path / "launch"
    driver = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)", str(launch)], start_new_session=True
    )
    try:
        here = {"host": worker_host(), "pid": driver.pid, "launch": str(launch), "work": str(tmp_path / "work")}
        mine = spark_job(JobState.FAILED, adoption=here)
        theirs = spark_job(JobState.FAILED, adoption={**here, "host": "spark-7.example"})

        # when
        lines = _stuck_jobs()

        # then
        assert driver.wait(timeout=60) != 0
        assert lines == [f"Job #{mine.pk}: its driver (pid {driver.pid}) is known stopped now"]
        assert Job.objects.get(pk=mine.pk).adoption is None
        assert Job.objects.get(pk=theirs.pk).adoption is not None
        assert "saw the driver's process group" in Job.objects.get(pk=mine.pk).log_entries.order_by("pk").last().message
        assert job_resume(job=mine, user=people["admin"]).state == JobState.QUEUED
    finally:
        if driver.poll() is None:
            driver.kill()
