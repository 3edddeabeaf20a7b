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

Only plans made entirely of ``DELETE`` statements use it (a drop, a truncate, a partition drop); ALTERs' inserts and
updates keep their triggers.

Large inserts get the same treatment through :func:`batched_insert_checks` (a merge's publishing transaction writes
millions of rows whose every foreign key PostgreSQL would check one row at a time): the same role, under the same
conditions (no trigger of the inserted tables' own, every key they hold single-column), and after the last insert one
pass per foreign key over the rows inserted: a referenced row that does not exist refuses the execution naming it.
Referenced rows other sessions can see are locked ``FOR KEY SHARE`` by that pass, as PostgreSQL's per-row check locks
them, so a concurrent delete of one waits for the commit and then fails its own check; rows the same transaction
inserted (the caller names their key range) are invisible to every other session and need no lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connections, transaction

from catalog_admin.errors import ApplicationError, ErrorCode
from operations.preview import Step
from operations.sql import bigint_array_literal

__all__ = ("BatchedForeignKeys", "BatchedInsertChecks", "OwnKeys", "batched_foreign_keys", "batched_insert_checks")

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
    parent_sql: str = ""  # the referenced table as SQL names it


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
        quote = partial(_quote, self.alias)
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


@dataclass(frozen=True)
class OwnKeys:
    """Keys of ``table.column`` from ``low`` to ``high`` that the checking transaction inserted itself (invisible to
    every other session until it commits, so nobody can delete them meanwhile)."""

    column: str
    low: int
    high: int


@dataclass
class BatchedInsertChecks:
    """The foreign keys held by one transaction's inserted rows, checked once per constraint after the last insert."""

    alias: str
    references: tuple[Reference, ...]
    inserted: dict[str, str]  # table -> the condition selecting the rows the transaction inserted into it
    own: dict[str, OwnKeys] = field(default_factory=dict)  # parent table -> the keys the transaction inserted

    def check(self, cursor: Any) -> None:
        """Restore the per-row triggers, lock the referenced rows other sessions can see, then refuse the execution
        if any inserted row references a row that does not exist."""
        cursor.execute("SET LOCAL session_replication_role = origin")
        for reference in self.references:
            parent = reference.parent_sql or _quote(self.alias, reference.parent)
            key = _quote(self.alias, reference.parent_column)
            cursor.execute(  # the keys once; those other sessions can see locked as PostgreSQL's own check locks them
                f"WITH wanted AS MATERIALIZED ({self._wanted(reference)}), "
                f"locked AS MATERIALIZED (SELECT p.{key} FROM {parent} p WHERE p.{key} IN "
                f"(SELECT key FROM wanted{self._visible(reference)}) FOR KEY SHARE OF p) "
                f"SELECT (SELECT count(*) FROM locked), (SELECT w.key::text FROM wanted w "
                f"WHERE NOT EXISTS (SELECT 1 FROM {parent} p WHERE p.{key} = w.key) LIMIT 1)"
            )
            missing = cursor.fetchone()[1]
            if missing is not None:
                raise ApplicationError(
                    ErrorCode.EXECUTION_FAILED,
                    f"{reference.child} rows reference {reference.parent} rows that do not exist "
                    f"({reference.child}.{reference.child_column} = {missing}, foreign key {reference.name}): "
                    "nothing was applied.",
                    {"constraint": reference.name, "table": reference.child, "key": missing},
                )

    def _wanted(self, reference: Reference) -> str:
        """The distinct non-null keys the inserted rows of the reference's table hold (as ``key``)."""
        column = _quote(self.alias, reference.child_column)
        child = reference.child_sql or _quote(self.alias, reference.child)
        return (
            f"SELECT DISTINCT c.{column} AS key FROM {child} c "
            f"WHERE ({self.inserted[reference.child]}) AND c.{column} IS NOT NULL"
        )

    def _visible(self, reference: Reference) -> str:
        """The condition on ``wanted`` keeping the keys other sessions can see: all, except those in the range this
        transaction inserted into the referenced table itself."""
        own = self.own.get(reference.parent)
        if own is None or own.column != reference.parent_column:
            return ""
        return f" WHERE NOT (key BETWEEN {int(own.low)} AND {int(own.high)})"


def batched_insert_checks(
    cursor: Any, alias: str, inserted: dict[str, str | None], own: dict[str, OwnKeys], rows: int
) -> BatchedInsertChecks | None:
    """Switch the transaction to one check per foreign key for its inserts (see the module), or ``None``: not
    PostgreSQL, fewer than ``CATALOG_BATCHED_FOREIGN_KEY_ROWS`` rows, a trigger of an inserted table's own, a
    multi-column key, an inserted table holding a key whose new rows ``inserted`` cannot name (``None``), or a role
    that may not set ``session_replication_role``. ``inserted``: every table the transaction inserts into, with the
    condition selecting its new rows; ``own``: keys it inserts that other tables' new rows reference."""
    if connections[alias].vendor != "postgresql" or rows < _minimum_rows() or not inserted:
        return None
    references, blocked = _references(cursor, sorted(inserted), side="child")
    if blocked or not references or any(inserted.get(r.child) is None for r in references):
        return None
    if not _replica(cursor, alias):
        return None
    conditions = {table: where for table, where in inserted.items() if where is not None}
    return BatchedInsertChecks(alias, tuple(references), conditions, dict(own))


def _minimum_rows() -> int:
    return int(getattr(settings, "CATALOG_BATCHED_FOREIGN_KEY_ROWS", DEFAULT_MIN_ROWS))


def _replica(cursor: Any, alias: str) -> bool:
    """``SET LOCAL session_replication_role = replica`` in a savepoint: False (the transaction still usable) when the
    role may not set it."""
    try:
        with transaction.atomic(using=alias):
            cursor.execute("SET LOCAL session_replication_role = replica")
    except DatabaseError:
        return False
    return True


def _quote(alias: str, name: str) -> str:
    return str(connections[alias].ops.quote_name(name))


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
    if sum(max(step.expected_rows, 0) for step in steps if step.metastore_table in parents) < _minimum_rows():
        return None
    if len({(r.parent, r.parent_column) for r in references}) != len(parents):
        return None  # a table referenced through two different columns: not one key to return
    if not _replica(cursor, alias):
        return None
    return BatchedForeignKeys(alias, tuple(references))


def _references(cursor: Any, tables: list[str], side: str = "parent") -> tuple[list[Reference], bool]:
    """The foreign keys pointing at ``tables`` (``side="child"``: the ones ``tables`` hold), and whether anything
    forbids skipping the per-row triggers: a trigger of the tables' own, a key of more than one column, or (pointing
    at them: their rows are deleted) a referencing key that is not NO ACTION/RESTRICT."""
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
        "WHERE attrelid = con.confrelid AND attnum = con.confkey[1]), con.conrelid::regclass::text, "
        "con.confrelid::regclass::text "
        "FROM pg_constraint con JOIN pg_class child ON child.oid = con.conrelid "
        "JOIN pg_class parent ON parent.oid = con.confrelid "
        f"WHERE con.contype = 'f' AND con.{'conrelid' if side == 'child' else 'confrelid'} = ANY("
        "SELECT to_regclass(quote_ident(name)) FROM unnest(%s::text[]) AS name) ORDER BY con.conname",
        [tables],
    )
    references = []
    for row in cursor.fetchall():
        (
            name,
            child,
            parent,
            conkey,
            confkey,
            on_delete,
            child_column,
            parent_column,
            key_type,
            child_sql,
            parent_sql,
        ) = row
        if len(conkey) != 1 or len(confkey) != 1 or (side == "parent" and on_delete not in ("a", "r")):
            return [], True
        references.append(Reference(name, child, child_column, parent, parent_column, key_type, child_sql, parent_sql))
    return references, False
