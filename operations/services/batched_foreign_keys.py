"""
PostgreSQL checks a ``DELETE``'s foreign keys one deleted row at a time (an internal trigger per row and per
referencing constraint: dropping a 100,000-partition table runs about 1.6 million of them, most of its statements'
time). For a plan of large deletes, :class:`BatchedForeignKeys` does the same check once per constraint instead:

* inside the metastore transaction it sets ``session_replication_role = replica`` (``SET LOCAL``: it ends with the
  transaction), which PostgreSQL documents as the way to skip the per-row foreign-key triggers; only when the role
  may set it (a superuser, or ``GRANT SET ON PARAMETER session_replication_role`` on PostgreSQL 15+), when no table
  the plan deletes from has a trigger of its own (those would not fire in that mode), and when every constraint
  referencing those tables is a plain single-column ``NO ACTION``/``RESTRICT`` one (a cascade would not run).
  Otherwise nothing changes: PostgreSQL checks row by row as before;
* each ``DELETE`` from a table that others reference returns the deleted keys (``RETURNING``);
* after the last statement, before anything else, one query per referencing constraint asks whether any row still
  points at a deleted key (``SELECT … WHERE column = ANY(keys) LIMIT 1``, through the referencing column's index
  where it has one). Any such row refuses the execution naming the constraint, and the whole transaction rolls back:
  nothing is applied, as the per-row trigger would have refused it. The check runs after the deletes, in the same
  transaction, as PostgreSQL's own: a row another session inserted meanwhile either committed first (the check sees
  it) or waits on the deleted row's lock and then fails its own foreign-key check.

Only plans made entirely of ``DELETE`` statements use it (a drop, a truncate, a partition drop): inserts and updates
keep their triggers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connections, transaction

from catalog_admin.errors import ApplicationError, ErrorCode
from operations.preview import Step
from operations.sql import bigint_array_literal

__all__ = ("BatchedForeignKeys", "batched_foreign_keys")

# Below this many rows deleted from referenced tables, PostgreSQL's own row-by-row checks cost less than the set-up
# (``CATALOG_BATCHED_FOREIGN_KEY_ROWS`` overrides it).
DEFAULT_MIN_ROWS = 5000


@dataclass(frozen=True)
class Reference:
    """One foreign key pointing at a table the plan deletes from: ``child.child_column`` → ``parent.parent_column``."""

    name: str
    child: str
    child_column: str
    parent: str
    parent_column: str
    key_type: str  # the referenced column's SQL type (``bigint``)
    child_sql: str = ""  # the referencing table as SQL names it (schema-qualified when off the search path)


@dataclass
class BatchedForeignKeys:
    """The foreign keys of one execution's deletes, checked once per constraint after the last statement."""

    alias: str
    references: tuple[Reference, ...]
    deleted: dict[str, list[Any]] = field(default_factory=dict)  # parent table -> the keys its DELETE removed

    def returning(self, table: str) -> str:
        """What a DELETE from ``table`` must return: `` RETURNING <key>`` when others reference it, else ``""``."""
        column = self._key(table)
        return f" RETURNING {connections[self.alias].ops.quote_name(column)}" if column else ""

    def keep(self, table: str, rows: Sequence[Sequence[Any]]) -> None:
        """The keys a DELETE from ``table`` returned."""
        self.deleted.setdefault(table, []).extend(row[0] for row in rows)

    def check(self, cursor: Any) -> None:
        """Restore the per-row triggers, then refuse the execution if any row still references a deleted key: one
        query per referenced table (its deleted keys sent once, each referencing table probed for them)."""
        cursor.execute("SET LOCAL session_replication_role = origin")
        quote = connections[self.alias].ops.quote_name
        for parent, keys in self.deleted.items():
            references = [r for r in self.references if r.parent == parent]
            if not keys or not references:
                continue
            probes = " UNION ALL ".join(
                f"(SELECT %s, c.{quote(r.child_column)}::text FROM {r.child_sql or quote(r.child)} c "
                f"WHERE c.{quote(r.child_column)} IN (SELECT key FROM deleted) LIMIT 1)"
                for r in references
            )
            cursor.execute(
                f"WITH deleted AS MATERIALIZED (SELECT unnest(%s::{references[0].key_type}[]) AS key) "
                f"SELECT * FROM ({probes}) AS found LIMIT 1",
                [_array_literal(keys, references[0].key_type), *(r.name for r in references)],
            )
            found = cursor.fetchone()
            if found is not None:
                reference = next(r for r in references if r.name == found[0])
                raise ApplicationError(
                    ErrorCode.EXECUTION_FAILED,
                    f"{reference.child} rows still reference deleted {reference.parent} rows "
                    f"({reference.child}.{reference.child_column} = {found[1]}, foreign key {reference.name}): "
                    "nothing was applied.",
                    {"constraint": reference.name, "table": reference.child, "key": found[1]},
                )

    def _key(self, table: str) -> str | None:
        columns = {r.parent_column for r in self.references if r.parent == table}
        return columns.pop() if columns else None


def _array_literal(keys: Sequence[Any], key_type: str) -> Any:
    """The deleted keys as one parameter: integer keys as one array literal (100,000 of them for a large drop),
    others as the list."""
    return bigint_array_literal(keys) if key_type in ("bigint", "integer", "smallint") else list(keys)


def batched_foreign_keys(cursor: Any, alias: str, steps: Sequence[Step]) -> BatchedForeignKeys | None:
    """Switch the metastore transaction to one check per constraint for ``steps`` (see the module), or ``None``:
    not PostgreSQL, not only deletes, too few rows, a trigger or a cascading/multi-column key on the way, or a role
    that may not set ``session_replication_role``."""
    connection = connections[alias]
    if connection.vendor != "postgresql" or not steps or any(step.action != "delete" for step in steps):
        return None
    tables = sorted({step.metastore_table for step in steps})
    references, blocked = _references(cursor, tables)
    if blocked or not references:
        return None
    parents = {r.parent for r in references}
    minimum = getattr(settings, "CATALOG_BATCHED_FOREIGN_KEY_ROWS", DEFAULT_MIN_ROWS)
    if sum(max(step.expected_rows, 0) for step in steps if step.metastore_table in parents) < minimum:
        return None
    if len({(r.parent, r.parent_column) for r in references}) != len(parents):
        return None  # a table referenced through two different columns: not one key to return
    try:
        with transaction.atomic(using=alias):  # a savepoint: a refusal leaves the transaction usable
            cursor.execute("SET LOCAL session_replication_role = replica")
    except DatabaseError:
        return None
    return BatchedForeignKeys(alias, tuple(references))


def _references(cursor: Any, tables: list[str]) -> tuple[list[Reference], bool]:
    """The foreign keys pointing at ``tables``, and whether anything forbids skipping the per-row triggers: a trigger
    of the tables' own, or a referencing key that is not a single-column NO ACTION/RESTRICT one."""
    cursor.execute(
        "SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal AND tgrelid = ANY("
        "SELECT to_regclass(quote_ident(name)) FROM unnest(%s::text[]) AS name)",
        [tables],
    )
    if cursor.fetchone()[0]:
        return [], True
    cursor.execute(
        "SELECT con.conname, child.relname, parent.relname, con.conkey, con.confkey, con.confdeltype, "
        "(SELECT attname FROM pg_attribute WHERE attrelid = con.conrelid AND attnum = con.conkey[1]), "
        "(SELECT attname FROM pg_attribute WHERE attrelid = con.confrelid AND attnum = con.confkey[1]), "
        "(SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
        "WHERE attrelid = con.confrelid AND attnum = con.confkey[1]), con.conrelid::regclass::text "
        "FROM pg_constraint con JOIN pg_class child ON child.oid = con.conrelid "
        "JOIN pg_class parent ON parent.oid = con.confrelid "
        "WHERE con.contype = 'f' AND con.confrelid = ANY("
        "SELECT to_regclass(quote_ident(name)) FROM unnest(%s::text[]) AS name) ORDER BY con.conname",
        [tables],
    )
    references = []
    for row in cursor.fetchall():
        name, child, parent, conkey, confkey, on_delete, child_column, parent_column, key_type, child_sql = row
        if len(conkey) != 1 or len(confkey) != 1 or on_delete not in ("a", "r"):
            return [], True
        references.append(Reference(name, child, child_column, parent, parent_column, key_type, child_sql))
    return references, False
