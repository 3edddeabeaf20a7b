"""
ACID directory state read from a metastore and its filesystem: the valid write ids Hive's readers use, each
directory's ``getAcidState`` result (:mod:`catalog_admin.hive.acid`), and the Initiator's "needs compaction".

The valid write-id list follows ``TxnHandler.getValidWriteIdsForTable`` (3.1 and 4.0): the high-water mark is the
highest write id allocated to a transaction at or under the transaction high-water mark (else NEXT_WRITE_ID - 1,
capped by it); every write id under it whose transaction is open or aborted (TXNS) is an exception. The transaction
high-water mark is ``NEXT_TXN_ID - 1`` on 3.x (``TxnHandler.getOpenTxns``) and ``MAX(TXN_ID)`` of TXNS on 4.x, whose
TXN_ID is an identity column and NEXT_TXN_ID is gone.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from django.conf import settings
from django.db.models import Count, Exists, Max, OuterRef, Q
from django.db.models.functions import Lower

from catalog_admin.hive.acid import (
    AcidDirectoryState,
    CompactionNeed,
    CompactionThresholds,
    ValidTxnList,
    ValidWriteIdList,
    acid_state,
    compaction_need,
)
from catalog_admin.locations import filesystem_for
from catalog_admin.models import (
    CompactionQueueEntry,
    CompletedCompaction,
    NextTransactionId,
    NextWriteId,
    Partition,
    Table,
    TableParam,
    Transaction,
    TransactionComponent,
    TransactionWriteId,
)
from catalog_admin.selectors.metastores import Metastore, get_metastore
from catalog_admin.selectors.pagination import Page, keyset_page

__all__ = (
    "DirectoryReport",
    "PartitionNeed",
    "compaction_queue",
    "compaction_thresholds",
    "directory_report",
    "is_transactional",
    "partition_reports",
    "table_is_transactional",
    "table_thresholds",
    "transactional_condition",
    "valid_txn_list",
    "valid_write_ids",
    "worst_partitions",
)

OPEN, ABORTED = "o", "a"


@dataclass(frozen=True)
class DirectoryReport:
    """One table or partition directory: its ``getAcidState`` and whether the Initiator would compact it."""

    partition: str | None
    location: str | None
    listed: bool  # False: the filesystem cannot be listed here (hdfs without a client, or the directory is missing)
    state: AcidDirectoryState | None
    need: CompactionNeed | None


@dataclass(frozen=True)
class PartitionNeed:
    """A row of the metastore's "needs compaction" list."""

    database: str
    table: str
    report: DirectoryReport


def valid_txn_list(metastore: Metastore) -> ValidTxnList:
    """The reader's ``ValidReadTxnList``: the high-water mark and the open and aborted transactions under it."""
    alias = metastore.alias
    if metastore.schema.capabilities.transaction_high_water_mark_from_txns:
        high = Transaction.objects.on(metastore).aggregate(top=Max("id"))["top"] or 0
    else:
        high = (NextTransactionId.objects.using(alias).values_list("next", flat=True).first() or 1) - 1
    rows = Transaction.objects.on(metastore).filter(id__lte=high, state__in=(OPEN, ABORTED)).values_list("id", "state")
    states = list(rows)
    return ValidTxnList(
        high_watermark=high,
        open=frozenset(t for t, s in states if s == OPEN),
        aborted=frozenset(t for t, s in states if s == ABORTED),
    )


def valid_write_ids(metastore: Metastore, database: str, table: str, txns: ValidTxnList) -> ValidWriteIdList:
    """``TxnHandler.getValidWriteIdsForTable`` for a reader outside any transaction."""
    if not metastore.schema.has_write_ids:
        return ValidWriteIdList(high_watermark=0)
    alias = metastore.alias
    allocated = TransactionWriteId.objects.using(alias).filter(database=database, table=table)
    high = allocated.filter(txn_id__lte=txns.high_watermark).aggregate(top=Max("write_id"))["top"] or 0
    if high <= 0:
        following = NextWriteId.objects.using(alias).filter(database=database, table=table)
        top = (following.values_list("next", flat=True).first() or 1) - 1
        high = min(top, txns.high_watermark) if top > 0 else 0
    invalid, aborted = [], set()
    for txn_id, write_id in allocated.filter(write_id__lte=high).order_by("write_id").values_list("txn_id", "write_id"):
        if txns.is_valid(txn_id):
            continue
        invalid.append(write_id)
        if txns.is_aborted(txn_id):
            aborted.add(write_id)
    return ValidWriteIdList(high_watermark=high, invalid=tuple(invalid), aborted=frozenset(aborted))


def is_transactional(params: dict[str, str | None]) -> bool:
    """``AcidUtils.isTablePropertyTransactional``: ``transactional`` is ``true`` (any case), or, when the table has no
    such key, ``TRANSACTIONAL`` is."""
    value = params.get("transactional")
    if value is None:
        value = params.get("TRANSACTIONAL")
    return (value or "").lower() == "true"


def transactional_condition(metastore: Metastore) -> Q:
    """:func:`is_transactional` of the outer query's table (its ``id``), in SQL. Keys compare case-sensitively and
    values through ``LOWER``: Hive's MySQL columns are ``latin1_bin``, where ``LIKE`` (``iexact``) is case-sensitive
    too."""
    params = TableParam.objects.using(metastore.alias).filter(table_id=OuterRef("id")).alias(lowered=Lower("value"))
    lower = params.filter(key="transactional")
    upper_true = Exists(params.filter(key="TRANSACTIONAL", lowered="true"))
    return Q(Exists(lower.filter(lowered="true"))) | (~Q(Exists(lower)) & Q(upper_true))


def table_is_transactional(metastore_name: str, database: str, table: str) -> bool:
    """Whether ``database.table`` of the metastore named ``metastore_name`` is transactional (one query)."""
    params = TableParam.objects.using(get_metastore(metastore_name).alias).filter(
        table__database__name=database, table__name=table, key__in=("transactional", "TRANSACTIONAL")
    )
    return is_transactional(dict(params.values_list("key", "value")))


def compaction_thresholds() -> CompactionThresholds:
    """The Initiator's thresholds from ``CATALOG_COMPACTION_THRESHOLDS`` (Hive's defaults when unset)."""
    return CompactionThresholds(**settings.CATALOG_COMPACTION_THRESHOLDS)


def table_thresholds(metastore: Metastore, table_id: int) -> CompactionThresholds:
    """The Initiator's thresholds for one table: the setting, overridden by its ``compactorthreshold.*`` properties."""
    params = {k: v or "" for k, v in _table_params(metastore, table_id).items()}
    return compaction_thresholds().for_table(params)


def directory_report(
    metastore: Metastore,
    location: str | None,
    write_ids: ValidWriteIdList,
    txns: ValidTxnList,
    *,
    partition: str | None = None,
    params: dict[str, str | None] | None = None,
    aborted_transactions: int = 0,
) -> DirectoryReport:
    """List one directory and compute its state and compaction need."""
    entries = filesystem_for(location).list_directory(location) if location else None
    if entries is None:
        return DirectoryReport(partition, location, False, None, None)
    state = acid_state(entries, write_ids, txns, visibility=metastore.schema.capabilities.acid_directory_visibility)
    table_params = {k: v or "" for k, v in (params or {}).items()}
    originals = {e.name: e.size for e in entries if not e.is_dir}
    original_bytes = sum(originals.get(name, 0) for name in state.original_files)
    need = compaction_need(
        state,
        compaction_thresholds().for_table(table_params),
        original_bytes=original_bytes,
        aborted_transactions=aborted_transactions,
        insert_only=table_params.get("transactional_properties", "") == "insert_only",
    )
    return DirectoryReport(partition, location, True, state, need)


def compaction_queue(metastore: Metastore, database: str, table: str) -> dict[str, list]:
    """The table's COMPACTION_QUEUE entries and its latest COMPLETED_COMPACTIONS (newest first, bounded)."""
    queued = CompactionQueueEntry.objects.on(metastore).filter(database=database, table=table).order_by("id")
    done = CompletedCompaction.objects.on(metastore).filter(database=database, table=table).order_by("-id")
    return {"queue": list(queued), "completed": list(done[: settings.CATALOG_PAGE_SIZE])}


def partition_reports(metastore: Metastore, database: str, table: Table, *, cursor: str = "", size: int = 50) -> Page:
    """A keyset page (by partition name) of ``database``'s ``table``'s partitions, each with its directory report; for
    an unpartitioned table, one report of the table's own directory."""
    txns = valid_txn_list(metastore)
    write_ids = valid_write_ids(metastore, database, table.name, txns)
    params = _table_params(metastore, table.id)
    partitions = Partition.objects.using(metastore.alias).filter(table_id=table.id)
    if not partitions.exists():
        location = table.sd.location if table.sd else None
        aborted = _aborted_counts(metastore, database, table.name).get(None, 0)
        report = directory_report(metastore, location, write_ids, txns, params=params, aborted_transactions=aborted)
        return Page(items=[report])
    page = keyset_page(
        partitions, keys=("name",), types=(str,), cursor=cursor, size=size, fields=("name", "sd__location")
    )
    aborted = _aborted_counts(metastore, database, table.name)
    reports = [
        directory_report(
            metastore,
            row["sd__location"],
            write_ids,
            txns,
            partition=row["name"],
            params=params,
            aborted_transactions=aborted.get(row["name"], 0),
        )
        for row in page.items
    ]
    return Page(items=reports, next_cursor=page.next_cursor)


def worst_partitions(metastore: Metastore, *, limit: int = 50) -> list[PartitionNeed]:
    """The table and partition directories of the metastore's transactional tables that the Initiator would compact,
    worst first (by how far past a threshold); at most ``CATALOG_ACID_SCAN_LIMIT`` directories are listed."""
    txns = valid_txn_list(metastore)
    needs = []
    per_table: dict[int, tuple[ValidWriteIdList, dict[str | None, int], dict[str, str | None]]] = {}
    for table, location, partition in _transactional_directories(metastore):
        database = table.database.name
        if table.id not in per_table:  # a fixed number of queries per table, none per partition
            per_table[table.id] = (
                valid_write_ids(metastore, database, table.name, txns),
                _aborted_counts(metastore, database, table.name),
                _table_params(metastore, table.id),
            )
        write_ids, aborted, params = per_table[table.id]
        report = directory_report(
            metastore,
            location,
            write_ids,
            txns,
            partition=partition,
            params=params,
            aborted_transactions=aborted.get(partition, 0),
        )
        if report.need is not None and report.need.needed:
            needs.append(PartitionNeed(database, table.name, report))
    needs.sort(key=lambda n: (-n.report.need.score, n.database, n.table, n.report.partition or ""))  # type: ignore[union-attr]
    return needs[:limit]


def _transactional_directories(metastore: Metastore) -> Iterator[tuple[Table, str | None, str | None]]:
    """(table, location, partition name) of every transactional table's directories, bounded by the scan limit."""
    budget = settings.CATALOG_ACID_SCAN_LIMIT
    tables = Table.objects.on(metastore, "sd", "database").filter(transactional_condition(metastore)).order_by("id")
    for table in tables:
        partitions = Partition.objects.using(metastore.alias).filter(table_id=table.id)
        rows = list(partitions.order_by("name").values_list("sd__location", "name")[:budget])
        if not rows:
            rows = [(table.sd.location if table.sd else None, None)]
        for location, name in rows:
            if budget <= 0:
                return
            budget -= 1
            yield table, location, name


def _table_params(metastore: Metastore, table_id: int) -> dict[str, str | None]:
    return dict(TableParam.objects.using(metastore.alias).filter(table_id=table_id).values_list("key", "value"))


def _aborted_counts(metastore: Metastore, database: str, table: str) -> dict[str | None, int]:
    """Aborted transactions per partition (``TxnHandler.findPotentialCompactions``: TXN_COMPONENTS of TXNS in state
    'a'), keyed by partition name (None: the table)."""
    aborted = Transaction.objects.on(metastore).filter(state=ABORTED).values("id")
    rows = (
        TransactionComponent.objects.using(metastore.alias)
        .filter(database=database, table=table, txn_id__in=aborted)
        .values("partition")
        .annotate(count=Count("txn_id", distinct=True))
    )
    return {row["partition"]: row["count"] for row in rows}
