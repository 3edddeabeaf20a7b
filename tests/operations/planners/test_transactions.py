"""
``ALTER TABLE t ABORT TRANSACTIONS …`` on the official 2.3.0, 3.1.0 and 4.0.0 schemas: TXNS open → aborted and their
HIVE_LOCKS gone as ``TxnHandler.abortTxns`` does it, TXN_COMPONENTS kept for the Cleaner, the aborted write then
invalid for readers, refusals as blockers, and no revert.
"""

from __future__ import annotations

import pytest

from catalog_admin.errors import ApplicationError
from catalog_admin.models import HiveLock, Transaction, TransactionComponent
from catalog_admin.seeding.content import ACID_JOBS
from catalog_admin.selectors.acid import valid_txn_list, valid_write_ids
from operations.services.alter import alter_preview_statement
from operations.services.revert import revert_preview
from tests.fixtures.operations import execute, metastore_dump

pytestmark = pytest.mark.django_db

SCHEMAS = pytest.mark.parametrize(
    "metastore_alias",
    ["hive31_pg", *(pytest.param(a, marks=pytest.mark.matrix) for a in ("hive23_pg", "hive40_pg", "hive40_my"))],
    indirect=True,
)


def open_ids(metastore) -> list[int]:
    return sorted(Transaction.objects.on(metastore).filter(state="o").values_list("id", flat=True))


@SCHEMAS
def test_stuck_transactions_are_aborted_as_hive_aborts_them(metastore):
    """Both open transactions on job_runs_acid abort, their locks go, their components stay; the open write id 3
    becomes an aborted one for readers."""
    # given
    ids = open_ids(metastore)
    components = TransactionComponent.objects.using(metastore.alias).filter(txn_id__in=ids).count()
    statement = f"ALTER TABLE ops.job_runs_acid ABORT TRANSACTIONS {' '.join(map(str, ids))}"
    preview = alter_preview_statement(metastore=metastore, statement=statement)
    # then
    assert preview.blockers == ()
    assert {w.code for w in preview.warnings} <= {"transaction_alive"}
    assert [(s.metastore_table, s.expected_rows) for s in preview.steps] == [("TXNS", 2), ("HIVE_LOCKS", 2)]
    # when
    execution = execute(preview)
    # then
    assert open_ids(metastore) == []
    assert set(Transaction.objects.on(metastore).filter(id__in=ids).values_list("state", flat=True)) == {"a"}
    assert not HiveLock.objects.using(metastore.alias).filter(txn_id__in=ids).exists()
    assert TransactionComponent.objects.using(metastore.alias).filter(txn_id__in=ids).count() == components
    if metastore.schema.has_write_ids:
        assert str(valid_write_ids(metastore, *ACID_JOBS, valid_txn_list(metastore))) == "3:MAX::3"
    with pytest.raises(ApplicationError) as error:
        revert_preview(execution=execution)
    assert error.value.code == "invalid_state" and "cannot be reverted" in error.value.message


@pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)
def test_refusals_are_blockers_and_nothing_is_written(metastore):
    """An aborted or unknown transaction, or one that holds nothing on the named table, blocks the plan."""
    # given
    aborted = Transaction.objects.on(metastore).get(state="a").id
    running = open_ids(metastore)[0]
    cases = {
        f"ALTER TABLE ops.job_runs_acid ABORT TRANSACTIONS {aborted}": ["transaction_not_open"],
        "ALTER TABLE ops.job_runs_acid ABORT TRANSACTIONS 999999": ["transaction_not_open"],
        f"ALTER TABLE sales.customers ABORT TRANSACTIONS {running}": ["transaction_elsewhere"],
    }
    dump = metastore_dump(metastore.alias)
    for statement, expected in cases.items():
        # when
        preview = alter_preview_statement(metastore=metastore, statement=statement)
        # then
        assert [b.code for b in preview.blockers] == expected, statement
        with pytest.raises(ApplicationError):
            execute(preview)
    assert (
        "already aborted"
        in alter_preview_statement(
            metastore=metastore, statement=f"ALTER TABLE ops.job_runs_acid ABORT TRANSACTIONS {aborted}"
        )
        .blockers[0]
        .message
    )
    assert metastore_dump(metastore.alias) == dump
