"""
Progress that tells the truth (issue 29): a Spark job's phases are measured on its row (Spark's start-up until the
program's first report, the work until its point of no return, the swap until its end), its ETA comes from the units
this run did since its work began (not from a throughput diluted by the start-up), and its page shows the approved
estimate phase by phase beside the phases measured so far.
"""

from __future__ import annotations

import re
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from operations.choices import JobState
from operations.models import Job
from operations.services import spark_jobs
from operations.services.jobs import JobHandle
from operations.services.spark_jobs import enqueue_spark_job
from operations.spark.engine import DriverFiles
from operations.spark.work import ProgressReader, WorkDir
from tests.fixtures.factories import html

pytestmark = pytest.mark.django_db
PLAN = {"directories": ["file:/data/a", "file:/data/b"]}
ESTIMATE = {
    "seconds": 36.0,
    "jobs": 2,
    "median_bytes_per_second": 100.0,
    "engine": "local[2]",
    "basis": "Spark start-up + copy + swap, from 2 earlier job(s) on local[2]",
    "phases": [
        {"name": "startup", "label": "Spark start-up", "seconds": 12.0, "basis": "median of 2 earlier start-up(s)"},
        {"name": "work", "label": "copy", "seconds": 20.0, "basis": "2,000 bytes at 100 B/s"},
        {"name": "swap", "label": "swap", "seconds": 4.0, "basis": "as 2 earlier swap(s) took"},
    ],
}


def spark_job(state: str = JobState.RUNNING, plan: dict | None = None, **fields) -> Job:
    job = enqueue_spark_job(program="checksum", plan=plan or PLAN, actor="test")
    Job.objects.filter(pk=job.pk).update(state=state, **fields)
    return Job.objects.get(pk=job.pk)


def test_the_eta_comes_from_the_units_done_since_the_work_began() -> None:
    """30 s since the job started, 20 s of them Spark's start-up: 1,000 of 3,000 bytes in the 10 s of work is
    100 B/s, so 20 s left (the whole run's 33 B/s said 60 s, three times too long)."""
    # given
    now = timezone.now()
    job = spark_job(
        started_at=now - timedelta(seconds=30), work_started_at=now - timedelta(seconds=10), work_bytes_at_start=0,
        bytes_done=1_000, bytes_total=3_000, partitions_done=1, partitions_total=3,
    )  # fmt: skip

    # when
    rate, eta = job.bytes_per_second, job.eta

    # then
    assert rate == pytest.approx(100, rel=0.05)
    assert eta.total_seconds() == pytest.approx(20, rel=0.05)


def test_a_resumed_run_counts_only_its_own_bytes_and_has_no_eta_before_its_first_unit() -> None:
    """A resumed attempt starts with 2,000 bytes its first attempt verified: those are not this run's throughput; and
    before this run finishes a unit there is no ETA, only the estimate."""
    # given
    now = timezone.now()
    fields = {"started_at": now - timedelta(seconds=15), "work_started_at": now - timedelta(seconds=10),
              "work_bytes_at_start": 2_000, "bytes_total": 3_000}  # fmt: skip
    waiting = spark_job(bytes_done=2_000, **fields)
    moving = spark_job(bytes_done=2_500, **fields)

    # then
    assert (waiting.bytes_per_second, waiting.eta) == (None, None)
    assert moving.bytes_per_second == pytest.approx(50, rel=0.05)
    assert moving.eta.total_seconds() == pytest.approx(10, rel=0.05)


def test_the_programs_first_report_ends_the_start_up_and_its_first_counters_are_what_was_done(
    tmp_path: Path,
) -> None:
    """Folding the driver's events: the first one's own time is when the work began (Spark's session up), the first
    counters' bytes are what a resumed run had already done; later reads change neither."""
    # given
    started = timezone.now() - timedelta(seconds=30)
    job = spark_job(started_at=started)
    work = WorkDir(str(tmp_path))
    report = work.reporter()
    before = time.time()
    report({"spark_app_id": "app-1", "spark_ui_url": "http://127.0.0.1:4040"})
    report({"message": "Copying 2 of 3 units", "partitions_done": 1, "partitions_total": 3, "bytes_done": 700,
            "bytes_total": 2_100})  # fmt: skip
    reader, files, handle = ProgressReader(work), DriverFiles(tmp_path), JobHandle(job.pk)

    # when
    spark_jobs._record_progress(handle, reader, files)
    first = Job.objects.get(pk=job.pk)
    report({"unit_done": "dt=1", "partitions_done": 2, "bytes_done": 1_400})
    spark_jobs._record_progress(handle, reader, files)
    later = Job.objects.get(pk=job.pk)

    # then
    assert before - 1 <= first.work_started_at.timestamp() <= time.time()
    assert first.work_bytes_at_start == 700 and first.spark_app_id == "app-1"
    assert (later.work_started_at, later.work_bytes_at_start) == (first.work_started_at, 700)
    assert (later.bytes_done, later.partitions_done, later.completed) == (1_400, 2, ["dt=1"])
    assert [name for name, _ in later.measured_phases] == ["start-up", "work"]


def test_a_new_attempt_measures_its_own_start_up() -> None:
    """A job queued again (resumed) is claimed afresh: its work start and bytes at start are this attempt's."""
    # given
    from operations.services.jobs import _claim

    job = spark_job(JobState.QUEUED, work_started_at=timezone.now(), work_bytes_at_start=10)

    # when
    _claim(job.pk)

    # then
    claimed = Job.objects.get(pk=job.pk)
    assert (claimed.state, claimed.work_started_at, claimed.work_bytes_at_start) == ("running", None, None)


def test_the_job_page_shows_the_estimate_by_phase_the_phases_so_far_and_the_eta(people: dict[str, User]) -> None:
    """Running, 10 s into its copy after 20 s of start-up: the approved estimate (start-up + copy + swap), what
    each phase took so far, and the time left of the copy, then the swap's estimate."""
    # given
    now = timezone.now()
    job = spark_job(
        plan={**PLAN, "approved": {"data_copy": {"duration": ESTIMATE}}},
        started_at=now - timedelta(seconds=30), work_started_at=now - timedelta(seconds=10), work_bytes_at_start=0,
        bytes_done=1_000, bytes_total=3_000, partitions_done=1, partitions_total=3, progress=33,
    )  # fmt: skip
    client = Client()
    client.force_login(people["viewer"])

    # when
    page = html(client.get(reverse("operations:job-detail", args=[job.pk])))

    # then
    assert "Spark start-up 12 s + copy 20 s + swap 4 s" in page and 'id="job-estimate">36 s' in page
    assert 'id="job-phases">start-up 20 s · work 10 s<' in page
    eta = page.split('id="job-eta">')[1].split("</dd>")[0]
    assert re.match(r"2[0-3] s ", eta) and "then the swap, ≈ 4 s" in eta  # 2,000 bytes at ~100 B/s


def test_a_job_still_starting_has_no_eta_yet_and_says_when_it_will(people: dict[str, User]) -> None:
    # given
    job = spark_job(started_at=timezone.now() - timedelta(seconds=5), bytes_total=3_000)
    client = Client()
    client.force_login(people["viewer"])

    # when
    page = html(client.get(reverse("operations:job-detail", args=[job.pk])))

    # then
    assert 'id="job-eta">— <span class="small muted">known once the first units finish</span>' in page


def test_the_api_gives_the_estimate_by_phase_and_the_phases_so_far(api) -> None:  # noqa: ANN001
    # given
    now = timezone.now()
    job = spark_job(
        plan={**PLAN, "approved": {"data_copy": {"duration": ESTIMATE}}},
        started_at=now - timedelta(seconds=30), work_started_at=now - timedelta(seconds=10), work_bytes_at_start=0,
        bytes_done=1_000, bytes_total=3_000,
    )  # fmt: skip

    # when
    shown = api["viewer"].get(reverse("operations_api:job-detail", args=[job.pk])).json()

    # then
    assert shown["estimate"]["phases"] == ESTIMATE["phases"] and shown["estimate"]["seconds"] == 36.0
    assert [p["phase"] for p in shown["phases"]] == ["start-up", "work"] and shown["phases"][0]["seconds"] == 20.0
    assert shown["eta_seconds"] == pytest.approx(20, rel=0.05) and shown["work_started_at"] is not None
