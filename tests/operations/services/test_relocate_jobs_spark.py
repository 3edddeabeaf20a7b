"""
Relocations end to end on the Spark engine (local[2], a real ``spark-submit`` driver): an approved request of a
partitioned table, and ``hive_ddl --execute`` of a whole table. Jobs run eagerly (``CATALOG_JOBS_MODE="eager"``:
``run_job`` in this process when the request's transaction commits, the very function a worker process runs), since
the swap writes the metastore inside the test's transaction, which a worker process could not see or roll back.
"""

from __future__ import annotations

import filecmp
import io
from contextlib import nullcontext
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from catalog_admin.selectors.metastores import Metastore
from operations.choices import JobState
from operations.models import Execution, Job, Relocation
from operations.services.jobs import run_job
from operations.services.relocate_jobs import RELOCATE
from operations.spark.entry import process_alive
from tests.fixtures.factories import partition_locations, table_row
from tests.fixtures.operations import location_of, path_of
from tests.operations.services.test_relocate_jobs import DAY, executed

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db,
    pytest.mark.usefixtures("eager_jobs", "local_spark"),
    pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True),  # one Spark run each is enough
]


@pytest.fixture
def local_spark(settings) -> None:  # noqa: ANN001
    settings.CATALOG_SPARK_MASTER = "local[2]"


def test_an_approved_relocation_copies_on_spark_verifies_swaps_and_keeps_the_source(
    metastore: Metastore, people: dict[str, User], warehouse: Path, django_capture_on_commit_callbacks
) -> None:
    """The request's job runs the relocate program on Spark, every file copied and verified, then one transaction
    re-points the partitions; the request succeeds, the source stays, and its page shows until when, with the job's
    page linked."""
    # given
    target = warehouse / "sales.db" / "orders_moved"
    orders = table_row(metastore, "sales", "orders")
    moving = {n: loc for n, loc in partition_locations(metastore, orders.id).items() if n.startswith(DAY + "/")}
    sources = {n: path_of(loc) for n, loc in moving.items() if path_of(loc).is_dir()}
    assert sources and any(p.is_file() for d in sources.values() for p in d.rglob("*")), "real files to copy"

    # when
    request, job = executed(people, metastore, target, django_capture_on_commit_callbacks)

    # then: the job and the request ended through the lifecycle
    job = Job.objects.get(pk=job.pk)
    request.refresh_from_db()
    assert (job.kind, job.state, request.state) == (RELOCATE, JobState.SUCCEEDED, "succeeded"), job.error
    assert job.spark_app_id.startswith("local-") and job.driver_pid
    assert job.result["execution"] == request.execution_id
    # the metastore points at the copies, which are there and identical; the source is kept
    now = partition_locations(metastore, orders.id)
    assert {n: now[n] for n in moving} == {n: location_of(target / n) for n in moving}
    for name, source in sources.items():
        comparison = filecmp.dircmp(source, target / name)
        assert not (comparison.diff_files or comparison.left_only or comparison.right_only), name
        assert any(source.iterdir())
    relocation = Relocation.objects.get(execution=request.execution)
    assert relocation.state == Relocation.State.SWAPPED
    assert relocation.files == sum(len(u["files"]) for u in job.plan["units"]) > 0
    assert Execution.objects.get(pk=request.execution_id).state == Execution.State.SUCCEEDED
    # the request page
    client = Client()
    client.force_login(people["steward"])
    page = client.get(reverse("operations:detail", args=[request.pk])).content.decode()
    assert f"{relocation.keep_until:%Y-%m-%d %H:%M} UTC" in page and 'id="relocation-keep-until"' in page
    assert reverse("operations:job-detail", args=[job.pk]) in page


def test_hive_ddl_executes_a_relocation_on_spark_printing_its_progress(metastore: Metastore, warehouse: Path) -> None:
    """``hive_ddl --execute`` runs the relocation job to its end, prints the driver's progress, and returns only once
    the copy was verified and the table swapped."""
    # given
    customers = table_row(metastore, "sales", "customers")
    source = path_of(customers.sd.location)
    target = warehouse / "sales.db" / "customers_v2"
    out = io.StringIO()

    # when
    call_command(
        "hive_ddl", f"ALTER TABLE sales.customers SET LOCATION '{location_of(target)}' WITH DATA",
        metastore=metastore.name, execute=True, reason="new volume", actor="ops", stdout=out,
    )  # fmt: skip

    # then
    printed = out.getvalue()
    job = Job.objects.get(kind=RELOCATE)
    assert job.state == JobState.SUCCEEDED and job.change_request is None
    assert f"Relocation job #{job.pk}" in printed and "Driver started on local[2]" in printed
    assert f"Copied, verified and swapped as execution #{job.result['execution']}" in printed
    assert table_row(metastore, "sales", "customers").sd.location == location_of(target)
    assert not filecmp.dircmp(source, target).diff_files and any(target.iterdir())
    execution = Execution.objects.get(pk=job.result["execution"])
    assert (execution.source, execution.actor, execution.reason) == ("cli", "ops", "new volume")
    assert "Copy duration: unknown (no basis yet: no finished job of this kind on local[2])" in printed
    # the finished job is the next relocation's basis (its bytes over its run time, on the same engine)
    again = io.StringIO()
    call_command("hive_ddl", f"ALTER TABLE sales.customers SET LOCATION '{location_of(source)}_back' WITH DATA",
                 metastore=metastore.name, stdout=again)  # fmt: skip
    assert "Copy duration: about " in again.getvalue()
    assert "(from 1 earlier job(s) on local[2], median " in again.getvalue()


def test_a_relocation_cancelled_while_its_driver_runs_swaps_nothing_and_removes_the_copy(
    metastore: Metastore, people: dict[str, User], warehouse: Path
) -> None:
    """A cancel request the runner finds once the driver is up: the driver is stopped, the partial copy removed, the
    metastore untouched, the source kept, and the request ends failed."""
    # given: queued (not run: no commit), resumed after a first attempt left a partial copy in the staging, and a
    # cancel request waiting for the runner
    target = warehouse / "sales.db" / "orders_moved"
    request, job = executed(people, metastore, target, lambda execute: nullcontext())
    Job.objects.filter(pk=job.pk).update(attempts=1)
    orders = table_row(metastore, "sales", "orders")
    before = partition_locations(metastore, orders.id)
    partial = target / job.plan["units"][0]["key"]
    partial.mkdir(parents=True)
    (partial / "part-00000").write_bytes(b"half")
    Job.objects.filter(pk=job.pk).update(cancel_requested_at=timezone.now(), cancel_requested_by="steward")

    # when
    ran = run_job(job.pk)

    # then
    request.refresh_from_db()
    assert (ran.state, request.state, request.execution) == (JobState.CANCELLED, "failed", None)
    assert ran.attempts == 2 and ran.driver_pid and not process_alive(ran.driver_pid), ran.error
    assert not target.exists()
    assert partition_locations(metastore, orders.id) == before
    assert not Execution.objects.exists()
    assert "nothing was swapped" in request.error
