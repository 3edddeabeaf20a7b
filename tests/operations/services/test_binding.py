"""
An approval binds the exact plan (issue 9, case 1): a change made in Hive between approval and execution to a row the
plan reads (a partition's location) makes the rebuilt plan another plan; execution is refused as stale, naming what
changed, and nothing is moved or written. Checked at the execute call (the service) and when a queued job runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.urls import reverse

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.models import Partition, StorageDescriptor
from catalog_admin.selectors.metastores import Metastore
from operations.ddl.parser import parse_alter
from operations.models import ChangeRequest, Execution, Job
from operations.services import alter_kind
from operations.services.change_requests import (
    change_request_approve,
    change_request_create,
    change_request_execute,
    change_request_submit,
)
from operations.services.jobs import run_job
from tests.fixtures.operations import metastore_dump, warehouse_tree

pytestmark = pytest.mark.django_db
ON_THREE_METASTORES = pytest.mark.parametrize(
    "metastore_alias", ["hive31_pg", "hive23_pg", "hive_sqlite"], indirect=True
)

DROP = "ALTER TABLE sales.orders DROP PARTITION (dt='2024-01-03', hour=0)"
SET_LOCATION = "ALTER TABLE sales.orders PARTITION (dt='2024-01-03', hour=0) SET LOCATION 'file:/data/orders/h0'"
PARTITION = "dt=2024-01-03/hour=0"


@pytest.fixture
def people() -> dict[str, User]:
    def account(name: str, role: str) -> User:
        user = User.objects.create_user(name, f"{name}@example.com", "not-a-secret-1")
        user.groups.add(Group.objects.get_or_create(name=role)[0])
        return user

    return {name: account(name, role) for name, role in
            (("steward", "steward"), ("approver", "approver"), ("approver2", "approver"))}  # fmt: skip


@pytest.fixture(autouse=True)
def eager_jobs(settings) -> None:
    settings.CATALOG_JOBS_MODE = "eager"


def approved(people: dict[str, User], metastore: Metastore, statement: str) -> ChangeRequest:
    """A request for ``statement``, submitted and approved by as many approvers as its policy asks."""
    request = change_request_create(
        user=people["steward"], metastore=metastore.name, spec=parse_alter(statement), reason="binding"
    )
    request = change_request_submit(request=request, user=people["steward"])
    for name in ("approver", "approver2")[: request.required_approvals]:
        request = change_request_approve(request=request, user=people[name])
    assert request.state == "approved"
    return request


def point_partition_at(metastore: Metastore, location: str) -> str:
    """Point the partition's storage descriptor at ``location``, as a Hive client could; returns the old one."""
    partition = Partition.objects.using(metastore.alias).get(
        table__database__name="sales", table__name="orders", name=PARTITION
    )
    descriptor = StorageDescriptor.objects.using(metastore.alias).filter(id=partition.sd_id)
    old = descriptor.values_list("location", flat=True).get()
    with allow_metastore_writes():
        descriptor.update(location=location)
    return old


def other_directory(warehouse: Path) -> Path:
    """A real directory with data that is not the partition's: the change must leave it where it is."""
    directory = warehouse / "sales.db" / "orders" / "elsewhere" / "hour=0"
    directory.mkdir(parents=True)
    (directory / "part-00000").write_text("someone else's rows\n")
    return directory


def labels(error: ApplicationError) -> list[str]:
    return [change["label"] for change in error.details["changed"]]


@ON_THREE_METASTORES
def test_an_approved_drop_of_a_partition_pointed_elsewhere_is_refused_and_moves_nothing(
    metastore: Metastore, people: dict[str, User], warehouse: Path, django_capture_on_commit_callbacks
) -> None:
    """Approve a DROP PARTITION, then point that partition at another real directory: execution is refused as stale,
    naming the partition's location and the directory move; the other directory and every row stay as they are."""
    # given
    request = approved(people, metastore, DROP)
    elsewhere = other_directory(warehouse)
    old = point_partition_at(metastore, f"file:{elsewhere}")
    before = (metastore_dump(metastore.alias), warehouse_tree(warehouse))

    # when
    with pytest.raises(ApplicationError) as caught, django_capture_on_commit_callbacks(execute=True):
        change_request_execute(request=request, user=people["steward"])

    # then
    assert caught.value.code == ErrorCode.STALE_PREVIEW
    assert f"Location of partition {PARTITION}" in labels(caught.value)
    location = next(c for c in caught.value.details["changed"] if c["label"] == f"Location of partition {PARTITION}")
    assert (location["previewed"], location["now"]) == (old, f"file:{elsewhere}")
    assert "Directory moves" in labels(caught.value)
    assert (metastore_dump(metastore.alias), warehouse_tree(warehouse)) == before
    assert (elsewhere / "part-00000").read_text() == "someone else's rows\n"
    assert ChangeRequest.objects.get(pk=request.pk).state == "approved"
    assert not Execution.objects.exists() and not Job.objects.exists()


@ON_THREE_METASTORES
def test_a_queued_job_refuses_a_drop_whose_partition_moved_after_it_was_accepted(
    metastore: Metastore, people: dict[str, User], warehouse: Path, settings, django_capture_on_commit_callbacks
) -> None:
    """The execution is accepted and queued for a worker; the partition is pointed elsewhere before the worker runs
    it: the job rebuilds the plan, finds it is not the approved one, fails the request and moves nothing."""
    # given
    settings.CATALOG_JOBS_MODE = "tasks"
    request = approved(people, metastore, DROP)
    with django_capture_on_commit_callbacks(execute=True):
        change_request_execute(request=request, user=people["steward"])
    elsewhere = other_directory(warehouse)
    point_partition_at(metastore, f"file:{elsewhere}")
    before = (metastore_dump(metastore.alias), warehouse_tree(warehouse))

    # when
    job = run_job(Job.objects.get(change_request_id=request.pk).pk)

    # then
    assert job.state == "failed"
    assert job.error.startswith("The table changed since the approved preview (")
    assert f"Location of partition {PARTITION}" in job.error and job.error.endswith("; nothing was executed.")
    assert ChangeRequest.objects.get(pk=request.pk).state == "failed"
    assert (metastore_dump(metastore.alias), warehouse_tree(warehouse)) == before
    assert not Execution.objects.exists()


@ON_THREE_METASTORES
def test_an_approved_partition_set_location_is_not_applied_over_a_newer_location(
    metastore: Metastore, people: dict[str, User], warehouse: Path, django_capture_on_commit_callbacks
) -> None:
    """Approve a partition SET LOCATION; Hive points the partition somewhere else meanwhile: execution is refused as
    stale naming the partition's location, and the newer location is not overwritten."""
    # given
    request = approved(people, metastore, SET_LOCATION)
    newer = f"file:{warehouse}/sales.db/orders/moved-by-hive"
    old = point_partition_at(metastore, newer)
    before = metastore_dump(metastore.alias)

    # when
    with pytest.raises(ApplicationError) as caught, django_capture_on_commit_callbacks(execute=True):
        change_request_execute(request=request, user=people["steward"])

    # then
    assert caught.value.code == ErrorCode.STALE_PREVIEW
    changed = {c["label"]: (c["previewed"], c["now"]) for c in caught.value.details["changed"]}
    assert changed[f"Location of partition {PARTITION}"] == (old, newer)
    assert "Statement 1" in changed  # the optimistic check's approved old location differs too
    assert metastore_dump(metastore.alias) == before
    assert not Execution.objects.exists()


@ON_THREE_METASTORES
def test_an_unchanged_approved_plan_runs_exactly_as_approved(
    metastore: Metastore, people: dict[str, User], warehouse: Path, django_capture_on_commit_callbacks
) -> None:
    """Nothing changed since approval: the rebuilt plan is the approved one and runs; the execution records the
    approved plan's fingerprint."""
    # given
    request = approved(people, metastore, DROP)

    # when
    with django_capture_on_commit_callbacks(execute=True):
        change_request_execute(request=request, user=people["steward"])

    # then
    request.refresh_from_db()
    assert request.state == "succeeded"
    assert request.execution.preview["fingerprint"] == request.fingerprint
    assert not Partition.objects.using(metastore.alias).filter(table__name="orders", name=PARTITION).exists()


@pytest.mark.parametrize("metastore_alias", ["hive31_pg", "hive_sqlite"], indirect=True)
def test_an_execute_post_checks_the_plan_and_the_worker_rebuilds_and_binds_it(
    metastore: Metastore,
    people: dict[str, User],
    warehouse: Path,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks,
) -> None:
    """Confirming the execution builds the plan once in the web request (to refuse a stale one at once); the job runs
    in a worker process, which builds it once more and executes it only because it is the approved plan."""
    # given
    request = approved(people, metastore, DROP)
    built = []
    real = alter_kind.alter_preview  # the ALTER change kind builds every ALTER request's plan
    monkeypatch.setattr(alter_kind, "alter_preview", lambda **kw: built.append(kw["spec"]) or real(**kw))
    client = Client()
    client.force_login(people["steward"])

    # when
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("operations:execute", args=[request.pk]), {"confirm": "on"})

    # then
    assert response.status_code == 302
    assert built == [parse_alter(DROP), parse_alter(DROP)]
    request.refresh_from_db()
    assert request.state == "succeeded"
    assert request.execution.preview["fingerprint"] == request.fingerprint
