"""
Transactional (ACID) tables in a merge: the write-id state Hive 3 and 4 read them with.

Hive 3+ names a transactional table's directories by write ids (``base_N``, ``delta_M_N``) and decides which it reads
from the table's ``NEXT_WRITE_ID`` row and the open or aborted transactions ``TXN_TO_WRITE_ID`` maps to the table.
With no row the high watermark is 0 ("if nobody modified this table, then current txn shouldn't read any data":
``TxnHandler.getValidWriteIdsForTable``), so an imported table would read as empty, and the target would hand out
write ids its directories already use. The merge therefore carries each imported transactional table's
``NEXT_WRITE_ID`` row (under its new database name) in the publishing transaction:

- from a 3.x/4.x source, the source's ``NWI_NEXT`` (1 for a table never written);
- from Hive 2.3, whose deltas are named by transaction ids, the source's ``NEXT_TXN_ID``: every id below it that is
  neither open nor aborted is committed, so the target sees exactly the directories the source sees.

Open transactions block the merge already (``preview._open_transactions``); aborted ones whose files the source's
cleaner has not removed yet block it too (``aborted_writes``: the target has no record of them and would read their
files as committed), and so does a ``NEXT_WRITE_ID`` row the target already holds for an arriving name
(``write_ids_exist``). A 2.3 target tracks no write ids: nothing is carried there.
"""

from __future__ import annotations

from dataclasses import dataclass

from operations.merge.plan import MergeBlocker
from operations.merge.reads import MetastoreReader
from operations.merge.request import MergeRequest

__all__ = (
    "WRITE_ID_TABLE",
    "WriteIdState",
    "imported_write_ids",
    "name_condition",
    "write_id_blockers",
    "write_id_states",
)

WRITE_ID_TABLE = "NEXT_WRITE_ID"
# Hive's transaction tables that name a table by (database, table): the merge's row and the ones Hive adds by writing.
NAME_COLUMNS = {WRITE_ID_TABLE: ("NWI_DATABASE", "NWI_TABLE"), "TXN_TO_WRITE_ID": ("T2W_DATABASE", "T2W_TABLE")}


@dataclass(frozen=True)
class WriteIdState:
    """One imported transactional table's ``NEXT_WRITE_ID`` row as the target gets it."""

    database: str  # the name it arrives under
    table: str
    next: int


def write_id_states(request: MergeRequest, src: MetastoreReader, tgt: MetastoreReader,
                    database_ids: list[int]) -> tuple[WriteIdState, ...]:  # fmt: skip
    """The ``NEXT_WRITE_ID`` rows the merge writes into the target (none into a 2.3 target)."""
    if not tgt.has_table(WRITE_ID_TABLE):
        return ()
    tables = transactional_tables(src, database_ids)
    if not tables:
        return ()
    if src.has_table(WRITE_ID_TABLE):
        database, table, nxt = (src.column(WRITE_ID_TABLE, c) for c in ("NWI_DATABASE", "NWI_TABLE", "NWI_NEXT"))
        rows = src.raw_rows(f"SELECT {database}, {table}, {nxt} FROM {src.table(WRITE_ID_TABLE)}")
        known = {(d.lower(), t.lower()): int(n) for d, t, n in rows}
        return tuple(WriteIdState(request.new_name(d), t, known.get((d, t), 1)) for d, t in tables)
    nxt = src.raw_rows(f"SELECT {src.column('NEXT_TXN_ID', 'NTXN_NEXT')} FROM {src.table('NEXT_TXN_ID')}")
    next_txn = int(nxt[0][0]) if nxt else 1
    return tuple(WriteIdState(request.new_name(d), t, next_txn) for d, t in tables)


def transactional_tables(src: MetastoreReader, database_ids: list[int]) -> list[tuple[str, str]]:
    """(database, table), lower-cased as Hive's transaction tables name them, of the chosen databases' transactional
    tables (``transactional=true``, ``AcidUtils.isTransactionalTable``)."""
    if not database_ids:
        return []
    dbs = ", ".join(str(int(i)) for i in database_ids)
    sql = (
        'SELECT d."NAME", t."TBL_NAME" FROM "TBLS" t JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
        'JOIN "TABLE_PARAMS" p ON p."TBL_ID" = t."TBL_ID" '
        f'WHERE t."DB_ID" IN ({dbs}) AND p."PARAM_KEY" = \'transactional\' AND LOWER(p."PARAM_VALUE") = \'true\''
    )
    return sorted({(d.lower(), t.lower()) for d, t in src.rows(sql)})


def write_id_blockers(request: MergeRequest, src: MetastoreReader, tgt: MetastoreReader,
                      database_ids: list[int]) -> list[MergeBlocker]:  # fmt: skip
    """Aborted writes the source still holds files of, and write-id rows the target already has for arriving names."""
    tables = transactional_tables(src, database_ids)
    if not tables:
        return []
    blockers = [
        MergeBlocker(
            "aborted_writes",
            f"{db}.{tbl}",
            f"'{db}.{tbl}' has aborted writes whose files the source's cleaner has not removed yet: the target would "
            "read them as committed. Compact the table in the source (its cleaner then removes them) before merging.",
        )
        for db, tbl in _aborted(src, tables)
    ]
    if tgt.has_table(WRITE_ID_TABLE):
        arriving = {(request.new_name(db), tbl) for db, tbl in tables}
        database, table = (tgt.column(WRITE_ID_TABLE, c) for c in ("NWI_DATABASE", "NWI_TABLE"))
        held = {(d.lower(), t.lower()) for d, t in tgt.raw_rows(f"SELECT {database}, {table} FROM "
                                                                f"{tgt.table(WRITE_ID_TABLE)}")}  # fmt: skip
        blockers += [
            MergeBlocker(
                "write_ids_exist",
                f"{db}.{tbl}",
                f"The target already tracks write ids for '{db}.{tbl}' (NEXT_WRITE_ID): a table of that name was "
                "dropped there without its transaction state being cleaned. Remove that row or rename the database.",
            )
            for db, tbl in sorted(arriving & held)
        ]
    return blockers


def imported_write_ids(tgt: MetastoreReader, database_range: list[int], table_range: list[int]) -> list[tuple]:
    """(database, table) of the ``NEXT_WRITE_ID`` rows a published merge wrote: its transactional tables, found by
    the journaled DBS and TBLS ranges (for a revert, before those rows go)."""
    if not tgt.has_table(WRITE_ID_TABLE) or not database_range or not table_range:
        return []
    sql = (
        'SELECT d."NAME", t."TBL_NAME" FROM "TBLS" t JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
        'JOIN "TABLE_PARAMS" p ON p."TBL_ID" = t."TBL_ID" '
        'WHERE d."DB_ID" BETWEEN %s AND %s AND t."TBL_ID" BETWEEN %s AND %s '
        "AND p.\"PARAM_KEY\" = 'transactional' AND LOWER(p.\"PARAM_VALUE\") = 'true'"
    )
    rows = tgt.rows(sql, [*database_range, *table_range])
    return sorted({(d.lower(), t.lower()) for d, t in rows})


def name_condition(tgt: MetastoreReader, table: str, names: list[tuple]) -> tuple[str, list[str]]:
    """A ``WHERE`` condition (quoted for ``tgt``) and its parameters selecting ``table``'s rows of ``names``."""
    database, name = (tgt.column(table, c) for c in NAME_COLUMNS[table])
    pairs = " OR ".join(f"({database} = %s AND {name} = %s)" for _ in names) or "1 = 0"
    return pairs, [part for pair in names for part in pair]


def _aborted(src: MetastoreReader, tables: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Of ``tables``, those with components of aborted transactions (TXNS state 'a', ``TxnStore.ABORTED_STATE``)."""
    if not (src.has_table("TXNS") and src.has_table("TXN_COMPONENTS")):
        return []
    c_db, c_tbl, c_txn = (src.column("TXN_COMPONENTS", c) for c in ("TC_DATABASE", "TC_TABLE", "TC_TXNID"))
    t_id, t_state = src.column("TXNS", "TXN_ID"), src.column("TXNS", "TXN_STATE")
    sql = (
        f"SELECT DISTINCT c.{c_db}, c.{c_tbl} FROM {src.table('TXN_COMPONENTS')} c "
        f"JOIN {src.table('TXNS')} t ON t.{t_id} = c.{c_txn} WHERE t.{t_state} = %s"
    )
    found = {(str(d).lower(), str(t).lower()) for d, t in src.raw_rows(sql, ["a"]) if d and t}
    return sorted(found & set(tables))
