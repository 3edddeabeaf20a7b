"""
The one job runner (``operations.services.jobs``): every job row is written by it alone; a kind's runner gets a
handle; an ``ApplicationError`` fails the job with its reason, any other exception errors it with the traceback's
last line; a cancel is taken at a safe point until the job's point of no return and refused after it; a stopping
worker puts its job back in the queue; the log is appended row by row, so concurrent writers lose nothing.
"""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection
from django.template.loader import render_to_string
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.models import TableParam
from catalog_admin.selectors.metastores import Metastore
from operations import lifecycle
from operations.choices import JobKind, JobState
from operations.ddl.parser import parse_alter
from operations.models import AuditRecord, ChangeRequest, Job, JobLogEntry
from operations.services import alter_jobs, job_adoption, jobs
from operations.services.change_requests import (
    change_request_approve,
    change_request_create,
    change_request_execute,
    change_request_submit,
)
from operations.services.jobs import JobHandle, JobKindRunner, job_cancel, job_log, job_resume, run_job
from tests.fixtures.factories import table_row

PROPERTIES = "ALTER TABLE sales.customers SET TBLPROPERTIES ('runner'='one')"
RUNNER_MODULE = Path("operations/services/jobs.py")
RUNNER_MODULES = {str(RUNNER_MODULE), "operations/services/job_queue.py", "operations/services/job_adoption.py"}
WRITES = {"update", "create", "bulk_create", "bulk_update", "get_or_create", "update_or_create", "delete", "save"}


# Only the runner writes job rows -------------------------------------------------------------------------------------


def _job_writes(path: Path) -> list[str]:
    """Where ``path`` writes a job row: ``Job.objects…<write>(…)``, ``JobLogEntry.objects…``, or ``<job>.save()``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in WRITES):
            continue
        chain, receiver = [], node.func.value
        while isinstance(receiver, ast.Attribute | ast.Call):
            receiver = receiver.func if isinstance(receiver, ast.Call) else receiver
            if isinstance(receiver, ast.Attribute):
                chain.append(receiver.attr)
                receiver = receiver.value
        name = receiver.id if isinstance(receiver, ast.Name) else ""
        on_model = name in ("Job", "JobLogEntry") and "objects" in chain
        on_instance = node.func.attr == "save" and not chain and name.lower().endswith("job")
        if on_model or on_instance:
            found.append(f"{path}:{node.lineno}")
    return found


def test_only_the_runner_module_writes_job_rows() -> None:
    """Services, kinds, commands, views and the API never update a job by hand: they ask the runner (``jobs`` and
    the two modules below it, ``job_queue`` and ``job_adoption``)."""
    root = Path(settings.BASE_DIR)
    sources = [
        path.relative_to(root)
        for package in ("operations", "catalog_admin")
        for path in (root / package).rglob("*.py")
        if "migrations" not in path.parts
    ]
    # when
    writers = {str(path): _job_writes(root / path) for path in sources}
    # then
    assert writers[str(RUNNER_MODULE)], "the check finds the runner's own writes"
    assert {path: lines for path, lines in writers.items() if lines and path not in RUNNER_MODULES} == {}


def test_every_job_kind_is_named_and_runs_through_the_runner() -> None:
    """The kinds the runner runs are exactly those ``JobKind`` names (what the job pages and the API show), each
    with its discard hook (what a cancel cleans up), and all but the plain Spark program execute change requests
    (``enqueue_execution``)."""
    # when
    registered = jobs.JOB_KINDS
    # then
    assert sorted(registered) == sorted(JobKind.values)
    assert [kind for kind, runner in registered.items() if runner.discard is None] == []
    assert [kind for kind, runner in registered.items() if runner.enqueue is None] == [JobKind.SPARK_PROGRAM]


def test_the_runner_base_imports_no_kind_nor_the_layers_above() -> None:
    """The runner base is below the kinds: no change-request service, merge, relocation or task module, not even
    inside a function."""
    tree = ast.parse((Path(settings.BASE_DIR) / RUNNER_MODULE).read_text())
    # when
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    # then
    above = (
        "operations.services.change_requests", "operations.merge", "operations.services.relocate",
        "operations.tasks", "operations.services.alter_jobs", "operations.services.spark_jobs",
    )  # fmt: skip
    assert "operations.models" in imported
    assert sorted(module for module in imported if module.startswith(above)) == []


# Terminal states -----------------------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("raised", "state", "error"),
    [
        (ApplicationError(ErrorCode.EXECUTION_FAILED, "The copy refused: 3 files changed."), "failed",
         "The copy refused: 3 files changed."),
        (KeyError("units"), "errored", "KeyError: 'units'"),
        (None, "succeeded", ""),
    ],
)  # fmt: skip
def test_a_job_ends_succeeded_failed_or_errored(
    monkeypatch: pytest.MonkeyPatch, raised: Exception | None, state: str, error: str
) -> None:
    """A refusal the work names fails the job; an unexpected exception (a bug, the infrastructure) errors it with the
    traceback's last line; a runner that returns succeeded."""

    # given
    def work(handle: JobHandle) -> None:
        handle.progress(1, 2, "half way", files_done=3)
        if raised is not None:
            raise raised

    monkeypatch.setitem(jobs.JOB_KINDS, "test_work", JobKindRunner(work))
    job = Job.objects.create(kind="test_work")
    # when
    ended = run_job(job.pk)
    # then
    assert (ended.state, ended.error, ended.files_done) == (state, error, 3)
    assert ended.is_done and ended.finished_at is not None
    assert list(ended.log_entries.values_list("message", flat=True))[0] == "half way"


@pytest.mark.django_db
def test_a_runner_cannot_set_the_state_of_its_job(monkeypatch: pytest.MonkeyPatch) -> None:
    """The handle sets runner fields only: a runner trying to end its job by hand errors it instead."""

    # given
    def sneaky(handle: JobHandle) -> None:
        handle.update(state=JobState.SUCCEEDED)

    monkeypatch.setitem(jobs.JOB_KINDS, "test_sneaky", JobKindRunner(sneaky))
    job = Job.objects.create(kind="test_sneaky")
    # when
    ended = run_job(job.pk)
    # then
    assert ended.state == "errored" and "does not set ['state']" in ended.error


@pytest.mark.django_db
def test_the_job_page_shows_an_errored_job_as_such(people: dict[str, User]) -> None:
    """Errored is not failed: the page says the error was unexpected, and offers resume."""
    # given
    job = Job.objects.create(kind="spark_program", program="checksum", state=JobState.ERRORED, error="OSError: disk")
    # when
    page = render_to_string(
        "operations/htmx/job_work.html",
        {
            "job": job,
            "can_cancel": lifecycle.can_cancel_job(job, None),
            "can_resume": lifecycle.can_resume_job(job, None),
        },
    )
    # then
    assert 'data-state="errored"' in page and ">Errored</span>" in page
    assert "Unexpected error (a bug or the infrastructure): OSError: disk" in page


# Cancel and resume ---------------------------------------------------------------------------------------------------


def _approved(people: dict[str, User], metastore: Metastore) -> ChangeRequest:
    request = change_request_create(user=people["steward"], metastore=metastore.name, spec=parse_alter(PROPERTIES))
    request = change_request_submit(request=request, user=people["steward"])
    for name in ("approver", "approver2")[: request.required_approvals]:
        request = change_request_approve(request=request, user=people[name])
    return request


def _runner_param(metastore: Metastore) -> bool:
    customers = table_row(metastore, "sales", "customers")
    return TableParam.objects.using(metastore.alias).filter(table_id=customers.id, key="runner").exists()


@pytest.mark.django_db
@pytest.mark.usefixtures("eager_jobs")
def test_a_running_alter_job_cancelled_before_its_transaction_stops_there(
    metastore: Metastore, people: dict[str, User], monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks
) -> None:
    """A cancel requested while the ALTER job previews is taken at its point of no return: the job ends cancelled,
    the metastore untouched, and the request is approved again, to execute once more within the same approvals (issue
    29: it ended failed and closed). (Before that, a running ALTER job could not be cancelled at all.)"""
    # given: the cancel arrives while the worker rebuilds the plan
    preview = alter_jobs.change_request_preview

    def previewing(request: ChangeRequest):  # noqa: ANN202
        job_cancel(job=Job.objects.get(change_request=request), user=people["steward"])
        return preview(request)

    monkeypatch.setattr(alter_jobs, "change_request_preview", previewing)
    request = _approved(people, metastore)
    # when
    with django_capture_on_commit_callbacks(execute=True):
        change_request_execute(request=request, user=people["steward"])
    # then
    job = Job.objects.get(change_request=request)
    request.refresh_from_db()
    assert (job.state, job.cancel_requested_by, job.committing_at) == ("cancelled", "steward", None)
    assert request.state == "approved" and "cancelled by steward before it changed anything" in request.error
    assert not _runner_param(metastore)
    assert AuditRecord.objects.filter(action="cancel_job", outcome="cancel requested").count() == 1
    assert lifecycle.can_execute(request, people["steward"])
    # when: executed again, nobody cancelling
    monkeypatch.setattr(alter_jobs, "change_request_preview", preview)
    with django_capture_on_commit_callbacks(execute=True):
        change_request_execute(request=request, user=people["steward"])
    # then
    request.refresh_from_db()
    assert (request.state, request.error) == ("succeeded", "") and _runner_param(metastore)


@pytest.mark.django_db
@pytest.mark.usefixtures("eager_jobs")
def test_a_cancel_after_the_point_of_no_return_is_refused_as_too_late(
    metastore: Metastore, people: dict[str, User], monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks
) -> None:
    """Once the metastore transaction started, a cancel is refused naming why, and the job runs to its end."""
    # given: the cancel arrives inside the transaction
    execute = alter_jobs.alter_execute
    refusals: list[ApplicationError] = []

    def executing(**kwargs):  # noqa: ANN003, ANN202
        with pytest.raises(ApplicationError) as refused:
            job_cancel(job=Job.objects.get(state=JobState.RUNNING), user=people["steward"])
        refusals.append(refused.value)
        return execute(**kwargs)

    monkeypatch.setattr(alter_jobs, "alter_execute", executing)
    request = _approved(people, metastore)
    # when
    with django_capture_on_commit_callbacks(execute=True):
        change_request_execute(request=request, user=people["steward"])
    # then
    [refusal] = refusals
    assert refusal.code == ErrorCode.INVALID_STATE and "too late" in refusal.message
    job = Job.objects.get(change_request=request)
    assert (job.state, job.cancel_requested_at) == ("succeeded", None) and job.committing_at is not None
    assert _runner_param(metastore)


@pytest.mark.django_db
@pytest.mark.usefixtures("eager_jobs")
def test_an_errored_alter_job_resumes_bound_to_the_approved_plan(
    metastore: Metastore, people: dict[str, User], monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks
) -> None:
    """An unexpected error leaves the request executing and the job errored; resumed, it runs the approved plan."""
    # given
    execute = alter_jobs.alter_execute

    def broken(**kwargs):  # noqa: ANN003, ANN202
        raise ConnectionResetError("metastore connection reset")

    monkeypatch.setattr(alter_jobs, "alter_execute", broken)
    request = _approved(people, metastore)
    with django_capture_on_commit_callbacks(execute=True):
        change_request_execute(request=request, user=people["steward"])
    errored = Job.objects.get(change_request=request)
    assert (errored.state, errored.error) == ("errored", "ConnectionResetError: metastore connection reset")
    assert ChangeRequest.objects.get(pk=request.pk).state == "executing"
    monkeypatch.setattr(alter_jobs, "alter_execute", execute)
    # when
    with django_capture_on_commit_callbacks(execute=True):
        job_resume(job=errored, user=people["steward"])
    # then
    resumed = Job.objects.get(pk=errored.pk)
    assert (resumed.state, resumed.attempts, resumed.error) == ("succeeded", 2, "")
    assert ChangeRequest.objects.get(pk=request.pk).state == "succeeded" and _runner_param(metastore)


@pytest.mark.django_db
def test_a_stopping_worker_puts_its_job_back_in_the_queue(
    monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks
) -> None:
    """At the next safe point after SIGTERM the job goes back to the queue, with a new task, its units kept."""
    # given
    monkeypatch.setattr(jobs, "_STOPPING", threading.Event())

    def work(handle: JobHandle) -> None:
        handle.add_completed(["unit-1"])
        jobs.request_stop()
        handle.check_cancel()
        handle.add_completed(["unit-2"])  # never reached

    monkeypatch.setitem(jobs.JOB_KINDS, "test_stop", JobKindRunner(work))
    job = Job.objects.create(kind="test_stop")
    # when
    with django_capture_on_commit_callbacks(execute=True):
        stopped = run_job(job.pk)
    # then
    assert (stopped.state, stopped.attempts, stopped.completed, stopped.worker) == ("queued", 1, ["unit-1"], "")
    assert DBTaskResult.objects.filter(task_path="operations.tasks.run_job_task", args_kwargs__args=[job.pk]).exists()


@pytest.mark.django_db
def test_a_runner_handing_its_driver_over_queues_the_job_for_a_worker_that_adopts_it_in_the_same_attempt(
    monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks
) -> None:
    """SIGTERM while a runner follows a Spark driver: it hands the job over with what a successor needs (a new task
    for the workers, no worker named, the driver's pid kept); the worker that claims it finds the adoption, stays in
    the same attempt and ends it like any run."""
    # given: a kind that hands over when its worker stops, and follows the adopted driver otherwise
    monkeypatch.setattr(jobs, "_STOPPING", threading.Event())
    seen: list[dict | None] = []

    def work(handle: JobHandle) -> None:
        seen.append(handle.adoption)
        if handle.adoption is None:
            handle.update(driver_pid=4242)
            jobs.request_stop()
            handle.hand_over({"host": "here", "pid": 4242, "program": "checksum"})
        handle.end_adoption()

    monkeypatch.setitem(jobs.JOB_KINDS, "test_hand_over", JobKindRunner(work))
    job = Job.objects.create(kind="test_hand_over")

    # when
    with django_capture_on_commit_callbacks(execute=True):
        handed = run_job(job.pk)

    # then
    assert (handed.state, handed.attempts, handed.worker, handed.driver_pid) == ("queued", 1, "", 4242)
    assert handed.adoption == {"host": "here", "pid": 4242, "program": "checksum"}
    assert handed.message.startswith("Handed over") and handed.continues_earlier_work
    assert DBTaskResult.objects.filter(task_path="operations.tasks.run_job_task", args_kwargs__args=[job.pk]).exists()

    # when: a worker that is not stopping claims it
    jobs._STOPPING.clear()
    adopted = run_job(job.pk)

    # then
    assert seen == [None, {"host": "here", "pid": 4242, "program": "checksum"}]
    assert (adopted.state, adopted.attempts, adopted.adoption) == ("succeeded", 1, None)


@pytest.mark.django_db
def test_a_handed_over_driver_nobody_follows_is_released_before_the_staging_is_discarded(
    monkeypatch: pytest.MonkeyPatch, people: dict[str, User]
) -> None:
    """Cancelled while queued after a handover, or claimed by a runner that ends before following it: the driver
    release hook runs first (then the kind's discard), and the adoption is forgotten."""
    # given
    calls: list[tuple[str, int]] = []
    monkeypatch.setattr(job_adoption, "_DRIVER_RELEASE", [lambda job: calls.append(("release", job.pk)) or True])

    def refuse(handle: JobHandle) -> None:
        raise ApplicationError(ErrorCode.INVALID_STATE, "refused before following the driver")

    runner = JobKindRunner(refuse, discard=lambda job, actor: calls.append(("discard", job.pk)))
    monkeypatch.setitem(jobs.JOB_KINDS, "test_release", runner)
    adoption = {"host": "here", "pid": 4242, "program": "checksum"}
    queued = Job.objects.create(kind="test_release", adoption=adoption)
    claimed = Job.objects.create(kind="test_release", adoption=adoption)

    # when
    cancelled = job_cancel(job=queued, user=people["admin"])
    failed = run_job(claimed.pk)

    # then
    assert calls == [("release", queued.pk), ("discard", queued.pk), ("release", claimed.pk)]
    assert (cancelled.state, cancelled.adoption) == ("cancelled", None)
    assert (failed.state, failed.error, failed.adoption) == ("failed", "refused before following the driver", None)


@pytest.mark.django_db
def test_a_driver_not_known_to_have_stopped_keeps_its_adoption_and_refuses_resume_and_the_staging_discard(
    monkeypatch: pytest.MonkeyPatch, people: dict[str, User]
) -> None:
    """The release hook cannot confirm the driver stopped (it runs on another host and wrote no exit marker): the
    adoption stays on the job, resume and cancel of the failed job are refused naming the driver, and a queued job's
    cancel keeps its staging (the discard never runs under a driver that may still write it)."""
    # given
    confirmed: list[bool] = [False]
    discarded: list[int] = []
    monkeypatch.setattr(job_adoption, "_DRIVER_RELEASE", [lambda job: confirmed[0]])

    def refuse(handle: JobHandle) -> None:
        raise ApplicationError(ErrorCode.EXECUTION_FAILED, "the driver did not confirm its stop")

    monkeypatch.setitem(
        jobs.JOB_KINDS, "test_unconfirmed", JobKindRunner(refuse, discard=lambda j, a: discarded.append(j.pk))
    )
    adoption = {"host": "there", "pid": 4242, "program": "checksum", "work": "/nowhere"}
    monkeypatch.setattr(job_adoption, "_ADOPTION_CHECK", [])
    claimed = Job.objects.create(kind="test_unconfirmed", adoption=adoption)
    queued = Job.objects.create(kind="test_unconfirmed", adoption=adoption)

    # when
    failed = run_job(claimed.pk)
    with pytest.raises(ApplicationError) as resumed:
        job_resume(job=failed, user=people["admin"])
    with pytest.raises(ApplicationError) as cancelled:
        job_cancel(job=failed, user=people["admin"])
    queued_cancelled = job_cancel(job=queued, user=people["admin"])

    # then
    assert (failed.state, failed.adoption) == ("failed", adoption)
    assert resumed.value.code == cancelled.value.code == ErrorCode.INVALID_STATE
    assert "(pid 4242 on there) was asked to stop and has not confirmed it" in resumed.value.message
    assert Job.objects.get(pk=claimed.pk).state == "failed"
    assert (queued_cancelled.state, queued_cancelled.adoption, discarded) == ("cancelled", adoption, [])
    assert "Its staging is kept." in queued_cancelled.log_entries.order_by("pk").last().message

    # when: the driver confirmed
    confirmed[0] = True
    resumed_job = job_resume(job=failed, user=people["admin"])

    # then
    assert (resumed_job.state, resumed_job.adoption) == ("queued", None)


@pytest.mark.django_db
def test_a_worker_that_cannot_reach_a_handed_over_drivers_work_location_leaves_the_job_queued(
    monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks
) -> None:
    """The adoption check names why this worker cannot adopt: the job is not claimed (no attempt, no worker), the
    reason is logged once, and its task is enqueued again for later (a worker that can reach it takes it)."""
    # given
    monkeypatch.setattr(job_adoption, "_ADOPTION_CHECK", [lambda job: "it cannot read /nowhere"])
    ran: list[int] = []
    monkeypatch.setitem(jobs.JOB_KINDS, "test_unreachable", JobKindRunner(lambda handle: ran.append(handle.job_id)))
    job = Job.objects.create(kind="test_unreachable", adoption={"host": "there", "work": "/nowhere"})

    # when: twice
    monkeypatch.setattr(settings, "CATALOG_JOBS_MODE", "tasks")
    run_job(job.pk)
    second = run_job(job.pk)

    # then
    assert (second.state, second.attempts, second.worker, ran) == ("queued", 0, "", [])
    assert [entry.message for entry in second.log_entries.order_by("pk")] == [
        f"Worker {jobs.worker_name()} left the handed-over job queued: it cannot read /nowhere"
    ]
    later = DBTaskResult.objects.filter(task_path="operations.tasks.run_job_task", args_kwargs__args=[job.pk])
    assert later.count() == 2 and all(task.run_after is not None for task in later)

    # when: the check passes
    monkeypatch.setattr(job_adoption, "_ADOPTION_CHECK", [lambda job: ""])
    adopted = run_job(job.pk)

    # then
    assert (adopted.state, ran) == ("succeeded", [job.pk])


# The log ---------------------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_api_shows_the_logs_last_lines_and_its_count(api: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long log is read by keyset: the last ``LOG_LINES_SHOWN`` lines, oldest first, and the count."""
    # given
    monkeypatch.setattr("operations.models.jobs.LOG_LINES_SHOWN", 3)
    job = Job.objects.create(kind="alter")
    for n in range(5):
        job_log(job, f"line {n}")
    # when
    shown = api["viewer"].get(f"/api/jobs/{job.pk}/").json()
    # then
    assert [line["message"] for line in shown["log"]] == ["line 2", "line 3", "line 4"]
    assert shown["log_count"] == 5


@pytest.mark.slow
@pytest.mark.django_db(transaction=True, databases=["default"])
def test_two_concurrent_appenders_lose_no_line() -> None:
    """Two threads, each on its own connection, append 150 lines each to one job at once: all 300 are kept, each
    thread's in its order. (A read-modify-write of one JSON log, as before, lost lines.)"""
    # given
    job = Job.objects.create(kind="alter")
    barrier = threading.Barrier(2)

    def append(name: str) -> None:
        try:
            barrier.wait()
            for n in range(150):
                job_log(job.pk, f"{name} {n}")
        finally:
            connection.close()

    threads = [threading.Thread(target=append, args=(name,)) for name in ("a", "b")]
    # when
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # then
    lines = list(JobLogEntry.objects.filter(job=job).values_list("message", flat=True))
    assert len(lines) == 300
    for name in ("a", "b"):
        assert [line for line in lines if line.startswith(f"{name} ")] == [f"{name} {n}" for n in range(150)]


# A cancel and its discard ------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.django_db(transaction=True, databases=["default"])
def test_nobody_reads_a_cancelled_job_before_its_discard_has_run(
    monkeypatch: pytest.MonkeyPatch, people: dict[str, User]
) -> None:
    """The job's cancelled state and its kind's discard (the staging removed, the request reopened) are one
    transaction: another connection reading the job while the discard runs still sees it as it was, so a page
    never shows a cancelled job beside a request still executing (the request page's poll stops at a done job)."""
    # given: a kind whose discard looks at the job from another connection, as a page's poll would
    seen: list[str] = []

    def read_elsewhere(job: Job, actor: str) -> None:
        def read() -> None:
            try:
                seen.append(Job.objects.get(pk=job.pk).state)
            finally:
                connection.close()

        reader = threading.Thread(target=read)
        reader.start()
        reader.join()

    def cancelled_at_its_safe_point(handle: JobHandle) -> None:
        Job.objects.filter(pk=handle.job_id).update(cancel_requested_at=timezone.now(), cancel_requested_by="o")
        handle.check_cancel()

    runner = JobKindRunner(cancelled_at_its_safe_point, discard=read_elsewhere)
    monkeypatch.setitem(jobs.JOB_KINDS, "test_discard", runner)
    running = Job.objects.create(kind="test_discard")
    queued = Job.objects.create(kind="test_discard")

    # when: a running job stops at its safe point, and a queued one is cancelled
    stopped = run_job(running.pk)
    cancelled = job_cancel(job=queued, user=people["admin"])

    # then: during each discard, the job still read as it was; after, cancelled
    assert seen == ["running", "queued"]
    assert (stopped.state, cancelled.state) == ("cancelled", "cancelled")
