"""
The Hive tables a merge carries and how each is scoped to the chosen databases: one set-based tally per table (count
and key spans), every scope a subquery on the source's own keys (no row is read into Python).

Ids: a table with its own id column takes new ids from the target's allocator for its DataNucleus class
(``SEQUENCE_TABLE``, as ``catalog_admin.ids.allocate_ids`` reserves them); a table without one is keyed by its parent's
id and shifts with it. Class names from Hive's ``package.jdo`` (standalone-metastore/src/main/resources/package.jdo).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from catalog_admin.ids import DATANUCLEUS_CLASSES, SEQUENCE_PREFIX
from operations.merge.reads import MetastoreReader, quoted_for

__all__ = ("CARRIED_TABLES", "NOT_CARRIED", "CarriedTable", "anywhere", "ranged", "sequence_of", "tally", "tally_sql")

# package.jdo classes whose tables the console's own executions never insert into (so not in catalog_admin/ids.py).
_MORE_CLASSES = {
    "FUNCS": "MFunction",
    "TBL_COL_PRIVS": "MTableColumnPrivilege",
    "PART_PRIVS": "MPartitionPrivilege",
    "PART_COL_PRIVS": "MPartitionColumnPrivilege",
}

# Scopes, written with double-quoted names (turned into backticks on MySQL): each takes the source's chosen DB_IDs and
# ``within``, which bounds an id column to the copy unit's key range (``ranged``) or not at all (``anywhere``, for
# counts). Bounding the inner query too, and not only the outer one, lets the database read one unit's rows through
# the indexes Hive declares (PARTITIONS.SD_ID, TBLS.SD_ID, SDS.SERDE_ID) instead of the whole scope per unit.
Within = Callable[[str], str]
Scope = Callable[[str, Within], str]


def anywhere(column: str) -> str:
    return ""


def ranged(column: str) -> str:
    return f" AND {column} BETWEEN %(low)s AND %(high)s"


def _databases(dbs: str, within: Within) -> str:
    return dbs


def _tables(dbs: str, within: Within) -> str:
    return f'SELECT "TBL_ID" FROM "TBLS" WHERE "DB_ID" IN ({dbs})' + within('"TBL_ID"')


def _partitions(dbs: str, within: Within) -> str:
    return f'SELECT "PART_ID" FROM "PARTITIONS" WHERE "TBL_ID" IN ({_tables(dbs, anywhere)})' + within('"PART_ID"')


def _descriptors(dbs: str, within: Within) -> str:
    """The storage descriptors of the chosen tables and of their partitions."""
    bound = within('"SD_ID"')
    return (
        f'SELECT "SD_ID" FROM "TBLS" WHERE "DB_ID" IN ({dbs}){bound} UNION ALL '
        f'SELECT "SD_ID" FROM "PARTITIONS" WHERE "TBL_ID" IN ({_tables(dbs, anywhere)}){bound}'
    )


def _of_descriptors(column: str) -> Scope:
    """The ``column`` (SERDE_ID, CD_ID) of the chosen storage descriptors, joined rather than nested so that a unit's
    range on ``column`` bounds the descriptors read."""

    def scope(dbs: str, within: Within) -> str:
        bound = within(f's."{column}"')
        return (
            f'SELECT s."{column}" FROM "SDS" s JOIN "TBLS" t ON t."SD_ID" = s."SD_ID" '
            f'WHERE t."DB_ID" IN ({dbs}){bound} UNION ALL '
            f'SELECT s."{column}" FROM "SDS" s JOIN "PARTITIONS" p ON p."SD_ID" = s."SD_ID" '
            f'WHERE p."TBL_ID" IN ({_tables(dbs, anywhere)}){bound}'
        )

    return scope


def _functions(dbs: str, within: Within) -> str:
    return f'SELECT "FUNC_ID" FROM "FUNCS" WHERE "DB_ID" IN ({dbs})' + within('"FUNC_ID"')


_serdes, _column_descriptors = _of_descriptors("SERDE_ID"), _of_descriptors("CD_ID")


@dataclass(frozen=True)
class CarriedTable:
    """One Hive table the merge copies: its id column (None: keyed by a parent) and the column that scopes it."""

    name: str
    id_column: str | None
    scope_column: str
    scope: Scope  # the ids (a subquery or the chosen DB_IDs) the scope column must be IN

    def where(self, dbs: str, within: Within = anywhere) -> str:
        """The condition that keeps this table's rows of the chosen databases (``dbs``: their DB_IDs, joined)."""
        return f'"{self.scope_column}" IN ({self.scope(dbs, within)})'


CARRIED_TABLES: tuple[CarriedTable, ...] = (
    CarriedTable("DBS", "DB_ID", "DB_ID", _databases),
    CarriedTable("DATABASE_PARAMS", None, "DB_ID", _databases),
    CarriedTable("DB_PRIVS", "DB_GRANT_ID", "DB_ID", _databases),
    CarriedTable("FUNCS", "FUNC_ID", "DB_ID", _databases),
    CarriedTable("FUNC_RU", None, "FUNC_ID", _functions),
    CarriedTable("TBLS", "TBL_ID", "DB_ID", _databases),
    CarriedTable("TABLE_PARAMS", None, "TBL_ID", _tables),
    CarriedTable("TBL_PRIVS", "TBL_GRANT_ID", "TBL_ID", _tables),
    CarriedTable("TBL_COL_PRIVS", "TBL_COLUMN_GRANT_ID", "TBL_ID", _tables),
    CarriedTable("KEY_CONSTRAINTS", None, "PARENT_TBL_ID", _tables),
    CarriedTable("PARTITION_KEYS", None, "TBL_ID", _tables),
    CarriedTable("PARTITIONS", "PART_ID", "TBL_ID", _tables),
    CarriedTable("PARTITION_KEY_VALS", None, "PART_ID", _partitions),
    CarriedTable("PARTITION_PARAMS", None, "PART_ID", _partitions),
    CarriedTable("PART_PRIVS", "PART_GRANT_ID", "PART_ID", _partitions),
    CarriedTable("PART_COL_PRIVS", "PART_COLUMN_GRANT_ID", "PART_ID", _partitions),
    CarriedTable("SDS", "SD_ID", "SD_ID", _descriptors),
    CarriedTable("SD_PARAMS", None, "SD_ID", _descriptors),
    CarriedTable("BUCKETING_COLS", None, "SD_ID", _descriptors),
    CarriedTable("SORT_COLS", None, "SD_ID", _descriptors),
    CarriedTable("SKEWED_COL_NAMES", None, "SD_ID", _descriptors),
    CarriedTable("SKEWED_VALUES", None, "SD_ID_OID", _descriptors),
    CarriedTable("SKEWED_COL_VALUE_LOC_MAP", None, "SD_ID", _descriptors),
    CarriedTable("SERDES", "SERDE_ID", "SERDE_ID", _serdes),
    CarriedTable("SERDE_PARAMS", None, "SERDE_ID", _serdes),
    CarriedTable("CDS", "CD_ID", "CD_ID", _column_descriptors),
    CarriedTable("COLUMNS_V2", None, "CD_ID", _column_descriptors),
    CarriedTable("TAB_COL_STATS", "CS_ID", "TBL_ID", _tables),
    CarriedTable("PART_COL_STATS", "CS_ID", "PART_ID", _partitions),
)

# What a merge never carries, and why (the source's rows are counted so the steward sees what stays behind).
NOT_CARRIED: tuple[tuple[str, str], ...] = (
    ("ROLES", "roles belong to the target's security model; not carried unless mapped (no mapping yet)"),
    ("ROLE_MAP", "role grants follow the roles, which are not carried"),
    ("GLOBAL_PRIVS", "global privileges belong to the target's security model; not carried unless mapped"),
    ("DELEGATION_TOKENS", "tokens are signed with the source's master keys; clients ask the target for new ones"),
    ("MASTER_KEYS", "the source's secret keys: never copied to another metastore"),
    ("NOTIFICATION_LOG", "the source's event history; the target's consumers follow the target's own log"),
    ("TXNS", "transaction bookkeeping of the source's transaction manager: its ids mean nothing in the target"),
    ("TXN_COMPONENTS", "transaction bookkeeping (open transactions block the merge instead)"),
    ("COMPLETED_TXN_COMPONENTS", "transaction bookkeeping of the source's transaction manager"),
    ("HIVE_LOCKS", "the source's locks: held by the source's clients, not the target's"),
    ("COMPACTION_QUEUE", "the source's compaction queue: the target's compactor schedules its own"),
)


def sequence_of(table: str) -> str | None:
    """The ``SEQUENCE_TABLE`` row that allocates ``table``'s ids (None when it has no DataNucleus class)."""
    klass = DATANUCLEUS_CLASSES.get(table) or _MORE_CLASSES.get(table)
    return SEQUENCE_PREFIX + klass if klass else None


def tally_sql(table: CarriedTable, database_ids: tuple[int, ...], vendor: str) -> str:
    """One statement over ``table``'s rows in the chosen databases: their count, the span of their own ids (NULLs
    for a table keyed by its parent) and the span of their scope column, which the copy is cut into units by."""
    dbs = ", ".join(str(int(i)) for i in database_ids) or "NULL"
    ids = f'MIN("{table.id_column}"), MAX("{table.id_column}")' if table.id_column else "NULL, NULL"
    keys = f'MIN("{table.scope_column}"), MAX("{table.scope_column}")'
    sql = f'SELECT COUNT(*), {ids}, {keys} FROM "{table.name}" WHERE {table.where(dbs)}'
    return quoted_for(sql, vendor)


Span = tuple[int, int]


def tally(
    src: MetastoreReader, table: CarriedTable, database_ids: tuple[int, ...]
) -> tuple[int, Span | None, Span | None]:
    """``tally_sql`` read: the row count, the span of the rows' own ids and the span of their scope column (None when
    there is no such row or id)."""
    rows, *spans = src.rows(tally_sql(table, database_ids, src.vendor))[0]
    return int(rows), _span(*spans[:2]), _span(*spans[2:])


def _span(low: int | None, high: int | None) -> Span | None:
    return None if low is None else (int(low), int(high))
