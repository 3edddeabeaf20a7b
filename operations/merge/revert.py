"""
Reverting a merge: delete exactly the journaled id ranges from the target (children first, in one transaction), so a
normalized dump of the target equals the one before the import (the reserved ids stay consumed, as any allocator's).

Rows Hive attached to imported objects since (a partition Hive added to an imported table: its TBL_ID in the range,
its own PART_ID outside) are found first; revert refuses, naming them, unless ``include_hive_rows`` deletes them too
(with their own children, storage descriptors and SerDes). The revert writes the DROP_TABLE and DROP_DATABASE events
Hive writes for dropping them (``operations.merge.events``) in the same transaction. Once that committed, the data the
merge copied for its location rules is removed (``operations.merge.data_copy.remove_merge_copies``): a directory
something in the target uses now, or holding a file the merge did not copy, is kept (``MergeImport.data_copy["kept"]``).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError, ErrorCode
from operations.merge.copy_plan import BY_NAME, COPY_TABLES, PUBLISH_TABLES, shifted_column
from operations.merge.data_copy import copied_directories, remove_merge_copies
from operations.merge.data_plan import DATA_UNITS_SHOWN
from operations.merge.events import write_revert_events
from operations.merge.reads import MetastoreReader
from operations.merge.write_ids import WRITE_ID_TABLE, imported_write_ids, name_condition
from operations.models import MergeImport

__all__ = ("MergeRevertPreview", "imported_rows", "merge_revert", "merge_revert_preview")

# Storage rows Hive's own new TBLS/PARTITIONS rows point at: attached through the referencing row, not a scope.
_REFERENCED = (("SDS", "SD_ID", ("TBLS", "PARTITIONS")), ("SERDES", "SERDE_ID", ("SDS",)), ("CDS", "CD_ID", ("SDS",)))


@dataclass(frozen=True)
class MergeRevertPreview:
    """What a revert deletes: rows per Hive table in the journaled ranges, rows Hive attached since, and the
    directories the merge copied data into (removed after the rows, each under the cleanup's delete-time checks)."""

    merge_id: int
    rows: tuple[tuple[str, int], ...]
    hive_rows: tuple[tuple[str, int], ...]
    copies: tuple[str, ...] = ()

    def rows_of(self, table: str) -> int:
        return dict(self.rows).get(table, 0)

    @property
    def needs_hive_rows(self) -> bool:
        return bool(self.hive_rows)

    def as_dict(self) -> dict:
        return {
            "merge": self.merge_id,
            "rows": dict(self.rows),
            "hive_rows": dict(self.hive_rows),
            "data_copies": {"directories": len(self.copies), "sample": list(self.copies[:DATA_UNITS_SHOWN])},
        }


def merge_revert_preview(merge: MergeImport) -> MergeRevertPreview:
    """Counts only; nothing is written."""
    _check_state(merge)
    tgt = MetastoreReader(merge.target)
    attached = _attached(tgt, merge)
    rows = tuple(
        (name, tgt.scalar(f'SELECT COUNT(*) FROM "{name}" WHERE {imported_rows(merge, name, tgt)}'))
        for name in _tables(tgt)
    )
    transactional = _transactional(tgt, merge)
    rows += ((WRITE_ID_TABLE, _count_named(tgt, WRITE_ID_TABLE, transactional)),)
    hive_rows = tuple((name, len(ids)) for name, ids in attached.items() if ids)
    hive_rows += tuple((t, n) for t, n in _hive_writes(tgt, transactional).items() if n)
    return MergeRevertPreview(merge.pk, tuple(r for r in rows if r[1]), hive_rows, copied_directories(merge))


def merge_revert(merge: MergeImport, *, include_hive_rows: bool = False) -> MergeImport:
    """Delete the merge's rows from the target in one transaction, children first; refuse (naming them) when Hive
    attached rows to imported objects, unless ``include_hive_rows``."""
    _check_state(merge)
    tgt = MetastoreReader(merge.target)
    with allow_metastore_writes(), transaction.atomic(using=merge.target):
        attached = _attached(tgt, merge)
        transactional = _transactional(tgt, merge)
        hive_writes = {t: n for t, n in _hive_writes(tgt, transactional).items() if n}
        found = {name: len(ids) for name, ids in attached.items() if ids} | hive_writes
        if found and not include_hive_rows:
            listed = ", ".join(f"{n} {name}" for name, n in found.items())
            raise ApplicationError(
                ErrorCode.INVALID_STATE,
                f"Hive has since added rows to imported objects ({listed}): revert with include_hive_rows to delete "
                "them too, or drop them in Hive first.",
                {"hive_rows": found},
            )
        write_revert_events(merge)
        with tgt.connection.cursor() as cursor:
            for table in (WRITE_ID_TABLE, *hive_writes):  # what Hive's DROP TABLE deletes (TxnHandler.cleanupRecords)
                if transactional:
                    condition, params = name_condition(tgt, table, transactional)
                    cursor.execute(f"DELETE FROM {tgt.table(table)} WHERE {condition}", params)
            for name in reversed(_tables(tgt)):
                cursor.execute(f"DELETE FROM {tgt.table(name)} WHERE {imported_rows(merge, name, tgt, attached)}")
    merge.state = MergeImport.State.REVERTED
    merge.save(update_fields=["state", "updated_at"])
    remove_merge_copies(merge)  # the rows are gone: the copied data goes, under the cleanup's delete-time checks
    return merge


def _transactional(tgt: MetastoreReader, merge: MergeImport) -> list[tuple]:
    """The imported transactional tables, by name, whose NEXT_WRITE_ID rows the merge wrote."""
    return imported_write_ids(tgt, merge.id_ranges.get("DBS", []), merge.id_ranges.get("TBLS", []))


def _count_named(tgt: MetastoreReader, table: str, names: list[tuple]) -> int:
    if not names or not tgt.has_table(table):
        return 0
    condition, params = name_condition(tgt, table, names)
    return int(tgt.raw_rows(f"SELECT COUNT(*) FROM {tgt.table(table)} WHERE {condition}", params)[0][0])


def _hive_writes(tgt: MetastoreReader, names: list[tuple]) -> dict[str, int]:
    """Write ids Hive allocated on imported transactional tables since the merge (TXN_TO_WRITE_ID rows)."""
    return {"TXN_TO_WRITE_ID": _count_named(tgt, "TXN_TO_WRITE_ID", names)}


def _check_state(merge: MergeImport) -> None:
    if merge.state == MergeImport.State.REVERTED:
        raise ApplicationError(
            ErrorCode.INVALID_STATE, f"Merge #{merge.pk} is already reverted.", {"state": "reverted"}
        )


def _tables(tgt: MetastoreReader) -> list[str]:
    """The carried tables the target has, parents first (a revert deletes them in reverse)."""
    return [name for name in (*COPY_TABLES, *PUBLISH_TABLES) if tgt.has_table(name)]


def imported_rows(
    merge: MergeImport, name: str, tgt: MetastoreReader, attached: dict[str, list[int]] | None = None
) -> str:
    """The condition on ``name``'s rows that ``merge`` imported: its own journaled id range (or its parent's, for rows
    keyed by a parent), plus the ``attached`` ids a revert deletes with them."""
    attached = attached or {}
    table = BY_NAME[name]
    owner = name if table.id_column else shifted_column(name)
    column = table.id_column or table.scope_column
    sql = _in_parent(merge, owner, attached, column) if owner else "1 = 0"
    return sql.replace('"', "`") if tgt.vendor == "mysql" else sql


def _attached(tgt: MetastoreReader, merge: MergeImport) -> dict[str, list[int]]:
    """Ids of rows Hive added to imported objects: id'd rows whose parent is imported (or itself attached) and whose
    own id is outside the journaled range; then the storage rows those point at, unless another row still uses them."""
    attached: dict[str, list[int]] = {}
    for name in PUBLISH_TABLES:
        table = BY_NAME[name]
        parent = shifted_column(name)
        if not table.id_column or parent == name or not tgt.has_table(name):
            continue
        scope = _in_parent(merge, parent, attached, table.scope_column)
        own = merge.id_ranges.get(name)
        outside = f' AND "{table.id_column}" NOT BETWEEN {own[0]} AND {own[1]}' if own else ""
        sql = f'SELECT "{table.id_column}" FROM "{name}" WHERE ({scope}){outside}'
        attached[name] = [int(i) for (i,) in tgt.rows(sql)]
    for name, column, referrers in _REFERENCED:
        ids: set[int] = set()
        for referrer in referrers:
            if attached.get(referrer):
                marks = ", ".join(str(i) for i in attached[referrer])
                key = BY_NAME[referrer].id_column
                sql = f'SELECT "{column}" FROM "{referrer}" WHERE "{key}" IN ({marks})'
                ids |= {int(i) for (i,) in tgt.rows(sql) if i}
        own = merge.id_ranges.get(name)
        ids = {i for i in ids if not own or not own[0] <= i <= own[1]}
        if name == "CDS" and ids:  # a column descriptor is shared: keep it while a row that stays uses it
            kept = _still_used_cds(tgt, merge, attached, ids)
            ids -= kept
        attached[name] = sorted(ids)
    return attached


def _in_parent(merge: MergeImport, parent: str, attached: dict[str, list[int]], column: str) -> str:
    parts = []
    if parent in merge.id_ranges:
        low, high = merge.id_ranges[parent]
        parts.append(f'"{column}" BETWEEN {int(low)} AND {int(high)}')
    if attached.get(parent):
        parts.append(f'"{column}" IN ({", ".join(str(int(i)) for i in attached[parent])})')
    return " OR ".join(parts) or "1 = 0"


def _still_used_cds(
    tgt: MetastoreReader, merge: MergeImport, attached: dict[str, list[int]], ids: set[int]
) -> set[int]:
    """Of ``ids``, the CD_IDs some storage descriptor that stays (neither imported nor attached) still uses."""
    marks = ", ".join(str(i) for i in sorted(ids))
    leaving = _in_parent(merge, "SDS", attached, "SD_ID")
    sql = f'SELECT DISTINCT "CD_ID" FROM "SDS" WHERE "CD_ID" IN ({marks}) AND NOT ({leaving})'
    return {int(i) for (i,) in tgt.rows(sql)}
