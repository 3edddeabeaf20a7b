"""ABORT_TXN events for ``ALTER TABLE t ABORT TRANSACTIONS id …``: one per transaction on Hive 3.1 and 4.0
(``TxnHandler.abortTxns`` → ``DbNotificationListener.onAbortTxn``), events of no table; none on 2.3."""

from __future__ import annotations

import pytest

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import NotificationSequence, Sequence, Transaction, TransactionWriteId
from catalog_admin.selectors.metastores import Metastore
from operations.preview import Preview
from operations.services.alter import alter_preview_statement
from tests.fixtures.operations import decode_event as decode
from tests.fixtures.operations import execute
from tests.fixtures.operations import notification_events as events

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("warehouse")]

ACID_SCHEMAS = pytest.mark.parametrize(
    "metastore_alias",
    ["hive31_pg", *(pytest.param(a, marks=pytest.mark.matrix) for a in ("hive40_pg", "hive31_my", "hive40_my"))],
    indirect=True,
)
NL_SEQUENCE = "org.apache.hadoop.hive.metastore.model.MNotificationLog"


def open_ids(metastore: Metastore) -> list[int]:
    return sorted(Transaction.objects.on(metastore).filter(state="o").values_list("id", flat=True))


def abort_preview(metastore: Metastore, ids: list[int]) -> Preview:
    statement = f"ALTER TABLE ops.job_runs_acid ABORT TRANSACTIONS {' '.join(map(str, ids))}"
    preview = alter_preview_statement(metastore=metastore, statement=statement)
    assert preview.blockers == ()
    return preview


def next_ids(metastore: Metastore) -> tuple[int, int]:
    """(NOTIFICATION_SEQUENCE.NEXT_EVENT_ID, SEQUENCE_TABLE's MNotificationLog NEXT_VAL)."""
    alias = metastore.alias
    event_id = NotificationSequence.objects.using(alias).get().next_event_id
    return event_id, Sequence.objects.using(alias).get(name=NL_SEQUENCE).next_val


@ACID_SCHEMAS
def test_each_aborted_transaction_writes_one_abort_txn_event_of_no_table(metastore: Metastore) -> None:
    """One ABORT_TXN per transaction in the plan's order, ids continuing both sequences, names as Hive's direct
    SQL writes them (3.1.0: DB_NAME 'null', TBL_NAME ' '; 4.0: NULL), the version's message format."""
    # given: the seeded running transaction (write id on ops.job_runs_acid) and the one waiting for its lock
    running, waiting = open_ids(metastore)
    preview = abort_preview(metastore, [waiting, running])  # the parser keeps the ids sorted, one each
    first_event, first_nl = next_ids(metastore)
    # when
    execute(preview)
    # then
    written = events(metastore)
    assert preview.events is not None and preview.events.counts == (("ABORT_TXN", 2),)
    assert preview.events.transactions == (running, waiting)
    assert [e.event_type for e in written] == ["ABORT_TXN", "ABORT_TXN"]
    assert [(e.event_id, e.id) for e in written] == [(first_event, first_nl), (first_event + 1, first_nl + 1)]
    assert next_ids(metastore)[0] == first_event + 2
    assert next_ids(metastore)[1] >= first_nl + 2
    names = (None, None, None) if metastore.schema.version.major >= 4 else (None, "null", " ")
    assert {(e.catalog_name, e.db_name, e.table_name) for e in written} == {names}
    assert {e.message_format for e in written} == {preview.events.message_format}
    assert preview.events.message_format == ("gzip(json-2.0)" if metastore.schema.version.major >= 4 else "json-0.2")
    assert all(e.event_time == decode(metastore, e)["timestamp"] for e in written)


@ACID_SCHEMAS
def test_abort_txn_messages_decode_to_hives_json_abort_txn_message(metastore: Metastore) -> None:
    """``JSONAbortTxnMessage``'s fields in declaration order; 4.0 adds ``dbsUpdated`` (databases with write ids from
    TXN_TO_WRITE_ID), gzipped and Base64-encoded."""
    # given
    running, waiting = open_ids(metastore)
    preview = abort_preview(metastore, [running, waiting])
    # when
    execute(preview)
    # then
    waiting_event, running_event = sorted(events(metastore), key=lambda e: e.event_id, reverse=True)
    decoded = [decode(metastore, e) for e in (running_event, waiting_event)]
    keys = ["txnid", "timestamp", "server", "servicePrincipal"]
    if metastore.schema.version.major >= 4:
        keys.append("dbsUpdated")
        assert TransactionWriteId.objects.using(metastore.alias).filter(txn_id=running).exists()
        assert [m["dbsUpdated"] for m in decoded] == [["ops"], []]
    assert [list(m) for m in decoded] == [keys, keys]
    assert [m["txnid"] for m in decoded] == [running, waiting]
    assert {(m["server"], m["servicePrincipal"]) for m in decoded} == {("", "")}


@pytest.mark.matrix
@pytest.mark.parametrize("metastore_alias", ["hive40_pg"], indirect=True)
def test_a_read_only_transaction_writes_no_abort_txn_on_hive_4(metastore: Metastore) -> None:
    """4.0's abortTxns reads the transactions ``TXN_TYPE != READ_ONLY`` and onAbortTxn skips the others."""
    # given
    running, waiting = open_ids(metastore)
    with allow_metastore_writes():  # the waiting transaction is a read-only one (TxnType.READ_ONLY)
        Transaction.objects.using(metastore.alias).filter(id=waiting).update(type=2)
    preview = abort_preview(metastore, [running, waiting])
    # when
    execute(preview)
    # then
    assert preview.events is not None and preview.events.counts == (("ABORT_TXN", 1),)
    assert [decode(metastore, e)["txnid"] for e in events(metastore)] == [running]
    assert set(Transaction.objects.on(metastore).filter(id__in=[running, waiting]).values_list("state", flat=True)) == {
        "a"
    }


@pytest.mark.matrix
@pytest.mark.parametrize("metastore_alias", ["hive23_pg"], indirect=True)
def test_an_abort_on_hive_2_3_writes_no_event(metastore: Metastore) -> None:
    """2.3's TxnHandler.abortTxns(AbortTxnsRequest) notifies no listener: no event, the sequence untouched."""
    # given
    ids = open_ids(metastore)
    preview = abort_preview(metastore, ids)
    before = list(NotificationSequence.objects.using(metastore.alias).values_list("next_event_id", flat=True))
    # when
    execute(preview)
    # then
    assert preview.events is None
    assert events(metastore) == []
    assert list(NotificationSequence.objects.using(metastore.alias).values_list("next_event_id", flat=True)) == before
    assert set(Transaction.objects.on(metastore).filter(id__in=ids).values_list("state", flat=True)) == {"a"}
