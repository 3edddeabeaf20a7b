"""
Relocations as Spark jobs, wired (quick tier, no Spark): executing an approved relocate request queues a ``relocate``
job with the relocate program and its plan (every file, the staging, the approved plan); cancelling it removes the
partial copy, only inside the governed roots, swaps nothing and approves the request again (nothing ran); a request
whose table changed since approval is refused before anything is copied; the engine runs the venv's Python. The copy
itself on Spark: ``tests/operations/services/test_relocate_jobs_spark.py``.
"""

from __future__ import annotations

import json
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import Partition, StorageDescriptor
from catalog_admin.selectors.metastores import Metastore
from operations import lifecycle
from operations.choices import JobState
from operations.ddl.parser import parse_alter
from operations.models import AuditRecord, ChangeRequest, Execution, Job
from operations.services.change_requests import (
    change_request_approve,
    change_request_create,
    change_request_execute,
    change_request_submit,
)
from operations.services.data_jobs import discard_data_job, run_data_job
from operations.services.jobs import JOB_KINDS, job_cancel, run_job
from operations.services.relocate_jobs import RELOCATE
from operations.services.stuck_jobs import settle_stuck_jobs
from operations.spark import engine as spark
from tests.fixtures.factories import partition_locations, table_row
from tests.fixtures.operations import location_of

pytestmark = pytest.mark.django_db
DAY = "dt=2024-01-02"


def relocation_statement(target: Path) -> str:
    return f"ALTER TABLE sales.orders PARTITION (dt='2024-01-02') SET LOCATION '{location_of(target)}' WITH DATA"


def approved_relocation(people: dict[str, User], metastore: Metastore, target: Path) -> ChangeRequest:
    spec = parse_alter(relocation_statement(target))
    request = change_request_create(user=people["steward"], metastore=metastore.name, spec=spec)
    request = change_request_submit(request=request, user=people["steward"])
    for name in ("approver", "approver2")[: request.required_approvals]:
        request = change_request_approve(request=request, user=people[name])
    return request


def executed(people: dict[str, User], metastore: Metastore, target: Path, capture) -> tuple[ChangeRequest, Job]:  # noqa: ANN001
    request = approved_relocation(people, metastore, target)
    with capture(execute=True):
        request = change_request_execute(request=request, user=people["steward"])
    return request, Job.objects.get(change_request=request)


def test_the_data_jobs_have_one_runner() -> None:
    """A worker knows the data job kinds (registered when the app loads): relocate, compact, convert and analyze run
    through the one data-job runner and discard hook, each kind giving only what differs."""
    # when
    runners = [JOB_KINDS.get(kind) for kind in ("relocate", "compact", "convert", "analyze")]

    # then
    assert all(r is not None for r in runners)
    assert {(r.run, r.discard) for r in runners if r is not None} == {(run_data_job, discard_data_job)}


def test_executing_an_approved_relocation_queues_the_relocate_program_with_its_plan(
    metastore: Metastore, people: dict[str, User], warehouse: Path, django_capture_on_commit_callbacks
) -> None:
    """Not an ALTER job: a relocate job for the workers, its plan listing every file of every partition, the new
    location as staging, and the approved plan the swap must still match; nothing is copied yet."""
    # given
    target = warehouse / "sales.db" / "orders_moved"
    orders = table_row(metastore, "sales", "orders")
    moving = {n for n in partition_locations(metastore, orders.id) if n.startswith(DAY + "/")}

    # when
    request, job = executed(people, metastore, target, django_capture_on_commit_callbacks)

    # then
    assert (request.state, job.kind, job.program, job.state) == ("executing", RELOCATE, "relocate", JobState.QUEUED)
    plan = job.plan
    assert (plan["metastore"], plan["staging"]) == (metastore.name, location_of(target))
    assert plan["approved"]["fingerprint"] == request.fingerprint
    assert plan["operation"] == request.operation
    assert [unit["key"] for unit in plan["units"]] == sorted(moving)
    assert all(f["destination"].startswith(location_of(target) + "/") for u in plan["units"] for f in u["files"])
    assert sum(len(u["files"]) for u in plan["units"]) == request.preview["data_copy"]["files"]
    assert DBTaskResult.objects.get().args_kwargs == {"args": [job.pk], "kwargs": {}}
    assert not target.exists()


def test_discarding_a_failed_relocation_removes_the_partial_copy_and_approves_the_request_again(
    metastore: Metastore, people: dict[str, User], warehouse: Path, django_capture_on_commit_callbacks
) -> None:
    """A driver failed half-way (one unit copied): cancelling the job removes the copy inside the governed root,
    leaves the source and the metastore as they were; nothing was swapped, so the request is approved again (issue 29:
    before, it ended failed and closed, and running it again needed a new request and new approvals), audited, and
    executing it again previews it again and queues a new job within the same approvals."""
    # given
    target = warehouse / "sales.db" / "orders_moved"
    request, job = executed(people, metastore, target, django_capture_on_commit_callbacks)
    orders = table_row(metastore, "sales", "orders")
    before = partition_locations(metastore, orders.id)
    partial = target / job.plan["units"][0]["key"]
    partial.mkdir(parents=True)
    (partial / "part-00000").write_bytes(b"half")
    Job.objects.filter(pk=job.pk).update(state=JobState.FAILED, completed=[job.plan["units"][0]["key"]])

    # when
    cancelled = job_cancel(job=job, user=people["steward"])

    # then
    assert cancelled.state == JobState.CANCELLED
    assert not target.exists()
    assert partition_locations(metastore, orders.id) == before
    assert all(Path(loc.removeprefix("file:")).exists() for n, loc in before.items() if n.startswith(DAY + "/"))
    request.refresh_from_db()
    assert (request.state, request.execution) == ("approved", None)
    assert f"Job #{job.pk} was cancelled by steward before it changed anything" in request.error
    reopened = AuditRecord.objects.get(action="reopen_cancelled")
    assert (reopened.actor, reopened.outcome, reopened.request_id_ref, reopened.details["job"]) == (
        "steward", "approved", request.pk, job.pk,
    )  # fmt: skip
    # when: the same approvals execute it again
    with django_capture_on_commit_callbacks(execute=False):
        again = change_request_execute(request=request, user=people["steward"])
    # then
    assert (again.state, again.error) == ("executing", "")
    assert Job.objects.filter(change_request=request).exclude(pk=job.pk).get().state == JobState.QUEUED


def test_a_table_moving_in_its_outside_partitions_stages_into_their_new_directories_never_its_root(
    metastore: Metastore, people: dict[str, User], warehouse: Path, django_capture_on_commit_callbacks
) -> None:
    """Relocating a table to its own root moves in only the partitions outside it: the job's staging is each one's
    new directory below the live root, so a cancel removes those partial copies and never the root or its data."""
    # given: an approved request to move sales.orders' outside partitions in, its job failed half-way
    orders = table_row(metastore, "sales", "orders")
    root = orders.sd.location
    before = partition_locations(metastore, orders.id)
    outside = sorted(name for name, loc in before.items() if not loc.startswith(root + "/"))
    spec = parse_alter(f"ALTER TABLE sales.orders SET LOCATION '{root}' WITH DATA")
    request = change_request_create(user=people["steward"], metastore=metastore.name, spec=spec)
    request = change_request_submit(request=request, user=people["steward"])
    for name in ("approver", "approver2")[: request.required_approvals]:
        request = change_request_approve(request=request, user=people[name])
    with django_capture_on_commit_callbacks(execute=True):
        change_request_execute(request=request, user=people["steward"])
    job = Job.objects.get(change_request=request)
    partial = Path(job.plan["staging"][0].removeprefix("file:"))
    partial.mkdir(parents=True)
    (partial / "part-00000").write_bytes(b"half")
    Job.objects.filter(pk=job.pk).update(state=JobState.FAILED)
    files_below_root = sorted(
        p for p in Path(root.removeprefix("file:")).rglob("*") if p.is_file() and partial not in p.parents
    )

    # when
    job_cancel(job=job, user=people["steward"])

    # then
    assert job.plan["staging"] == [f"{root}/{name}" for name in outside]
    assert [unit["key"] for unit in job.plan["units"]] == outside
    assert not partial.exists()
    assert sorted(p for p in Path(root.removeprefix("file:")).rglob("*") if p.is_file()) == files_below_root
    assert partition_locations(metastore, orders.id) == before


def test_a_relocation_settled_after_its_worker_died_is_cancelled_cleanly_by_an_operator(
    metastore: Metastore, people: dict[str, User], warehouse: Path, django_capture_on_commit_callbacks
) -> None:
    """A worker killed -9 mid-copy leaves its job running and silent: settled, the job is errored with its verified
    unit and the request still executing (resumable, nothing settled failed); an operator's cancel then discards it
    through the kind: the partial copy removed, the metastore as it was, the request approved again (nothing was
    swapped)."""
    # given: the row a worker killed -9 after one verified unit leaves, and that unit's copy
    target = warehouse / "sales.db" / "orders_moved"
    request, job = executed(people, metastore, target, django_capture_on_commit_callbacks)
    orders = table_row(metastore, "sales", "orders")
    before = partition_locations(metastore, orders.id)
    first = job.plan["units"][0]["key"]
    (target / first).mkdir(parents=True)
    (target / first / "part-00000").write_bytes(b"a verified copy")
    long_ago = timezone.now() - timedelta(hours=1)
    Job.objects.filter(pk=job.pk).update(
        state=JobState.RUNNING, attempts=1, started_at=long_ago, heartbeat_at=long_ago, completed=[first]
    )

    # when
    [settled] = settle_stuck_jobs(older_than=0)

    # then
    request.refresh_from_db()
    assert (settled.job_id, settled.outcome, request.state) == (job.pk, "errored", "executing")
    assert lifecycle.can_resume_job(Job.objects.get(pk=job.pk), people["admin"])

    # when
    cancelled = job_cancel(job=job, user=people["admin"])

    # then
    request.refresh_from_db()
    assert (cancelled.state, request.state, request.execution) == (JobState.CANCELLED, "approved", None)
    assert not target.exists() and partition_locations(metastore, orders.id) == before


def test_a_staging_outside_the_governed_roots_is_never_removed(
    metastore: Metastore, people: dict[str, User], warehouse: Path, tmp_path: Path, django_capture_on_commit_callbacks
) -> None:
    """Whatever a job's plan says, cancel removes nothing outside the metastore's governed roots."""
    # given
    target = warehouse / "sales.db" / "orders_moved"
    _, job = executed(people, metastore, target, django_capture_on_commit_callbacks)
    outside = tmp_path / "not-governed"
    (outside / "keep").mkdir(parents=True)
    Job.objects.filter(pk=job.pk).update(state=JobState.FAILED, plan={**job.plan, "staging": location_of(outside)})

    # when
    job_cancel(job=job, user=people["steward"])

    # then
    assert (outside / "keep").is_dir()
    assert "not inside a governed root" in " ".join(
        Job.objects.get(pk=job.pk).log_entries.values_list("message", flat=True)
    )


def test_a_staging_a_table_points_at_is_never_removed(
    metastore: Metastore, people: dict[str, User], warehouse: Path, django_capture_on_commit_callbacks
) -> None:
    """Cancelling re-checks the metastore when it deletes: a staging directory a table points at meanwhile (a Hive
    client's SET LOCATION, or a swap that committed) is kept, and the job's log says who uses it."""
    # given
    target = warehouse / "sales.db" / "orders_moved"
    _, job = executed(people, metastore, target, django_capture_on_commit_callbacks)
    target.mkdir(parents=True)
    (target / "part-00000").write_bytes(b"rows a table reads")
    customers = table_row(metastore, "sales", "customers")
    with allow_metastore_writes():
        StorageDescriptor.objects.using(metastore.alias).filter(id=customers.sd_id).update(location=location_of(target))
    Job.objects.filter(pk=job.pk).update(state=JobState.FAILED)

    # when
    job_cancel(job=job, user=people["steward"])

    # then
    assert (target / "part-00000").read_bytes() == b"rows a table reads"
    log = " ".join(Job.objects.get(pk=job.pk).log_entries.values_list("message", flat=True))
    assert f"left in place: sales.customers uses {location_of(target)}" in log


def test_a_relocation_whose_table_changed_since_approval_copies_nothing(
    metastore: Metastore, people: dict[str, User], warehouse: Path, django_capture_on_commit_callbacks
) -> None:
    """The worker previews again before copying: a partition re-pointed meanwhile fails the request as stale, with
    no Spark driver started, no copy and no execution; the job forgets its staging (it copied nothing there)."""
    # given
    target = warehouse / "sales.db" / "orders_moved"
    request, job = executed(people, metastore, target, django_capture_on_commit_callbacks)
    orders = table_row(metastore, "sales", "orders")
    name = job.plan["units"][0]["key"]
    sd_id = Partition.objects.using(metastore.alias).get(table_id=orders.id, name=name).sd_id
    with allow_metastore_writes():
        StorageDescriptor.objects.using(metastore.alias).filter(pk=sd_id).update(location="file:/elsewhere/moved")

    # when
    ran = run_job(job.pk)

    # then
    request.refresh_from_db()
    assert (ran.state, ran.driver_pid, request.state) == (JobState.FAILED, None, "failed")
    assert "changed since the approved preview" in ran.error
    assert "staging" not in ran.plan  # discarding this job later removes nothing it did not create
    assert not target.exists()
    assert not Execution.objects.exists()


@pytest.mark.parametrize(
    ("master", "conf", "python"),
    [
        ("local[2]", {}, sys.executable),
        ("spark://127.0.0.1:7077", {"spark.pyspark.python": "/opt/python3/bin/python"}, "/opt/python3/bin/python"),
        ("sc://127.0.0.1:15002", {}, None),
    ],
    ids=["default-venv", "configured", "connect"],
)
def test_the_driver_and_executors_run_the_venvs_python_unless_configured(
    tmp_path: Path, master: str, conf: dict[str, str], python: str | None
) -> None:
    """Spark's workers import fsspec and the programs: they run this interpreter unless the settings name another."""
    # given
    engine = spark.SparkEngine(master=master, conf=conf)

    # when
    files = spark.write_driver_files(
        tmp_path, engine=engine, program="relocate", plan={}, app_name="test", worker_pid=1
    )

    # then
    written = json.loads(files.spec.read_text())["conf"]
    assert written.get("spark.pyspark.python") == python
