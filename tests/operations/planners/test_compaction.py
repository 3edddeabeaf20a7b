"""
``ALTER TABLE … COMPACT`` as a governed change on the official 3.1.0 and 4.0.0 schemas: the queue entry written as
``TxnHandler.compact`` writes it (id from NEXT_COMPACTION_QUEUE_ID, state 'i', type 'a'/'i', no run-as, 4.x's
enqueue time), Hive's refusals as blockers, the revert that withdraws a still-initiated request, and the change-request
flow around it.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError
from catalog_admin.models import CompactionQueueEntry, NextCompactionQueueId
from catalog_admin.seeding.content import ABORTED_PARTITION, ACID_JOBS, ACID_PAYMENTS, OPEN_PARTITION
from catalog_admin.selectors.metastores import Metastore
from operations.ddl.parser import parse_alter
from operations.models import AuditRecord
from operations.services.alter import alter_preview, alter_preview_statement
from operations.services.change_requests import (
    change_request_approve,
    change_request_create,
    change_request_execute,
    change_request_submit,
)
from operations.services.revert import revert_preview
from tests.fixtures.factories import html
from tests.fixtures.operations import execute, metastore_dump

pytestmark = pytest.mark.django_db

BOTH = pytest.mark.parametrize(
    "metastore_alias", ["hive31_pg", pytest.param("hive40_pg", marks=pytest.mark.matrix)], indirect=True
)
EVERY_ACID_SCHEMA = pytest.mark.parametrize(
    "metastore_alias",
    ["hive31_pg", *(pytest.param(a, marks=pytest.mark.matrix) for a in ("hive40_pg", "hive31_my", "hive40_my"))],
    indirect=True,
)
OPEN_SPEC = "PARTITION (dt='2024-01-02', hour=6)"


def queue(metastore: Metastore) -> dict[int, dict]:
    fields = [
        f.name for f in CompactionQueueEntry._meta.concrete_fields if metastore.schema.has(CompactionQueueEntry, f.name)
    ]
    rows = CompactionQueueEntry.objects.using(metastore.alias).values(*fields)
    return {row["id"]: row for row in rows}


def next_id(metastore: Metastore) -> int:
    return NextCompactionQueueId.objects.using(metastore.alias).get().next


def codes(preview) -> list[str]:
    return [b.code for b in preview.blockers]


@EVERY_ACID_SCHEMA
def test_request_is_queued_as_hive_queues_it_and_withdrawn_by_revert(metastore):
    """Execute writes one COMPACTION_QUEUE row with the next id; the revert deletes it again (the id stays used)."""
    # given
    first = next_id(metastore)
    before = queue(metastore)
    preview = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE ops.job_runs_acid {OPEN_SPEC} COMPACT 'major'"
    )
    # then the preview shows Hive's statements and no blocker
    assert preview.blockers == ()
    assert (
        preview.statement
        == "ALTER TABLE `ops`.`job_runs_acid` PARTITION (`dt`='2024-01-02', `hour`='6') COMPACT 'major'"
    )
    assert [s.metastore_table for s in preview.steps] == ["AUX_TABLE", "NEXT_COMPACTION_QUEUE_ID", "COMPACTION_QUEUE"]
    assert preview.risk == "low" and preview.before == preview.after
    # when
    execution = execute(preview)
    # then
    added = {k: v for k, v in queue(metastore).items() if k not in before}
    assert list(added) == [first]
    row = added[first]
    assert (row["database"], row["table"], row["partition"]) == (*ACID_JOBS, OPEN_PARTITION)
    assert (row["state"], row["type"], row["run_as"], row["worker_id"], row["start"]) == ("i", "a", None, None, None)
    assert next_id(metastore) == first + 1
    if metastore.schema.version.major >= 4:
        assert row["enqueue_time"] > 1_700_000_000_000  # milliseconds from the database's clock
        assert row["initiator_id"].endswith("-manual")
    # when the request is withdrawn
    execute(revert_preview(execution=execution))
    # then
    assert queue(metastore) == before
    assert next_id(metastore) == first + 1  # Hive never hands out an id twice


@BOTH
def test_minor_compaction_of_an_unpartitioned_table(metastore):
    """A table-level request has no partition name and type 'i'; the seeded table-level request blocks a second."""
    # given the seeded request for payments_acid is finished
    with allow_metastore_writes():
        CompactionQueueEntry.objects.on(metastore).filter(table=ACID_PAYMENTS[1]).update(state="r", highest_write_id=1)
    preview = alter_preview(metastore=metastore, spec=parse_alter("ALTER TABLE sales.payments_acid COMPACT 'minor'"))
    # when
    execute(preview)
    # then
    row = CompactionQueueEntry.objects.on(metastore).get(table=ACID_PAYMENTS[1], state="i")
    assert (row.partition, row.type) == (None, "i")


@BOTH
def test_hive_refusals_are_blockers_and_nothing_is_written(metastore):
    """Already queued (Hive returns the existing id), not transactional, no partition of a partitioned table, a
    partition that does not exist: blockers, and execution refuses without writing."""
    # given
    queued = "ALTER TABLE ops.job_runs_acid PARTITION (dt='2024-01-01', hour=0) COMPACT 'major'"
    statements = {
        queued: "compaction_already_queued",
        "ALTER TABLE sales.payments_acid COMPACT 'major'": "compaction_already_queued",
        "ALTER TABLE sales.customers COMPACT 'major'": "nonacid_compaction_not_supported",
        "ALTER TABLE ops.job_runs_acid COMPACT 'minor'": "no_compaction_partition",
        "ALTER TABLE ops.job_runs_acid PARTITION (dt='1999-01-01', hour=0) COMPACT 'minor'": "invalid_partition_spec",
        "ALTER TABLE ops.job_runs_acid PARTITION (dt='2024-01-02') COMPACT 'minor'": "invalid_partition_spec",
    }
    dump = metastore_dump(metastore.alias)
    for statement, code in statements.items():
        # when
        preview = alter_preview_statement(metastore=metastore, statement=statement)
        # then
        assert codes(preview) == [code], statement
        with pytest.raises(ApplicationError) as error:
            execute(preview)
        assert error.value.code == "hive_rule_violation"
    queued = alter_preview_statement(
        metastore=metastore,
        statement="ALTER TABLE ops.job_runs_acid PARTITION (dt='2024-01-01', hour=0) COMPACT 'major'",
    )
    assert "state='initiated' and id=1" in queued.blockers[0].message
    assert ABORTED_PARTITION == "dt=2024-01-01/hour=0"
    assert metastore_dump(metastore.alias) == dump


@pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)
def test_revert_refused_once_a_worker_took_the_request(metastore):
    """A request a Worker is running ('w') cannot be withdrawn; one Hive already removed cannot either."""
    # given
    execution = execute(
        alter_preview_statement(
            metastore=metastore, statement=f"ALTER TABLE ops.job_runs_acid {OPEN_SPEC} COMPACT 'minor'"
        )
    )
    entry = CompactionQueueEntry.objects.on(metastore).filter(partition=OPEN_PARTITION)
    with allow_metastore_writes():
        entry.update(state="w", worker_id="hms-1-7")
    # then
    assert codes(revert_preview(execution=execution)) == ["compaction_started"]
    # when Hive is done with it
    with allow_metastore_writes():
        entry.delete()
    # then
    assert codes(revert_preview(execution=execution)) == ["compaction_not_queued"]


@pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)
@pytest.mark.usefixtures("eager_jobs")
def test_request_goes_through_approval_execution_and_audit(
    metastore, people: dict[str, User], django_capture_on_commit_callbacks
):
    """Like any ALTER: a change request, another person's approval, the job, and the audit trail."""
    # given
    spec = parse_alter(f"ALTER TABLE ops.job_runs_acid {OPEN_SPEC} COMPACT 'major'")
    request = change_request_create(
        user=people["steward"], metastore=metastore.name, spec=spec, reason="too many deltas"
    )
    request = change_request_submit(request=request, user=people["steward"])
    # when
    with django_capture_on_commit_callbacks(execute=True):
        for approver in ("approver", "approver2")[: request.required_approvals]:
            request = change_request_approve(request=request, user=people[approver])
    with django_capture_on_commit_callbacks(execute=True):
        request = change_request_execute(request=request, user=people["steward"])
    # then
    request.refresh_from_db()
    assert request.state == "succeeded"
    assert CompactionQueueEntry.objects.on(metastore).filter(partition=OPEN_PARTITION, state="i").count() == 1
    actions = list(AuditRecord.objects.filter(request_id_ref=request.pk).values_list("action", flat=True))
    assert actions[:2] == ["create", "submit"] and actions[-2:] == ["execute", "finish"]


@pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)
def test_the_change_form_previews_a_compaction_and_its_refusal(metastore, people, client):
    """The live preview shows the queue entry's statements, and Hive's refusal as a blocker."""
    # given
    client.force_login(people["steward"])
    url = reverse("operations:preview")
    # when
    queued = client.post(
        url, {"metastore": metastore.name, "statement": f"ALTER TABLE ops.job_runs_acid {OPEN_SPEC} COMPACT 'minor'"}
    )
    refused = client.post(
        url, {"metastore": metastore.name, "statement": "ALTER TABLE sales.customers COMPACT 'major'"}
    )
    # then
    assert queued.status_code == 200
    assert "COMPACTION_QUEUE" in html(queued) and "NEXT_COMPACTION_QUEUE_ID" in html(queued)
    assert 'id="preview-blockers"' not in html(queued)
    assert 'id="preview-blockers"' in html(refused) and "non-ACID table sales.customers" in html(refused)


@pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)
def test_a_transactional_table_page_offers_a_compaction_request(metastore, people, client):
    """The table page's change panel links to the guided request's compaction for transactional tables only."""
    # given
    client.force_login(people["steward"])
    # when
    acid = html(client.get(reverse("catalog:table", args=[metastore.name, *ACID_PAYMENTS])))
    plain = html(client.get(reverse("catalog:table", args=[metastore.name, "sales", "customers"])))
    # then
    assert 'id="request-compaction"' in acid and "table=sales.payments_acid&amp;operation=compaction" in acid
    assert 'id="request-compaction"' not in plain
