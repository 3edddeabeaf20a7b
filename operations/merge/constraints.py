"""
Constraints (``KEY_CONSTRAINTS``) in a merge: carried with their tables, ids shifted like any row keyed by its parent
table, names kept.

A row is the column ``POSITION`` of constraint ``CONSTRAINT_NAME`` on the table ``PARENT_TBL_ID``; a foreign key's
row also names the referencing table (``CHILD_TBL_ID``). What blocks:

- ``constraint_outside``: a foreign key between a merged table and one that is not merged. Its row would point at a
  table id the target does not have (or the foreign key would be left behind on one side).
- ``constraint_exists``: on Hive 2.3 and 3.1 a constraint name is unique in the whole metastore (the table's key is
  ``CONSTRAINT_NAME, POSITION``; ``ObjectStore.constraintNameAlreadyExists``), so a name the target already uses
  cannot arrive. Hive 4 keys constraints by their table (``PARENT_TBL_ID`` leads its key): names may repeat.
"""

from __future__ import annotations

from operations.merge.plan import MergeBlocker
from operations.merge.reads import MetastoreReader

__all__ = ("constraint_blockers",)

CONSTRAINTS = "KEY_CONSTRAINTS"
_NAMED = (
    'SELECT DISTINCT k."CONSTRAINT_NAME", d."NAME", t."TBL_NAME" FROM "KEY_CONSTRAINTS" k '
    'JOIN "TBLS" t ON t."TBL_ID" = k."{side}" JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
)


def constraint_blockers(src: MetastoreReader, tgt: MetastoreReader, database_ids: list[int]) -> list[MergeBlocker]:
    """Foreign keys that cross the merge's edge, and names the target already uses where names are metastore-wide."""
    if not database_ids or not (src.has_table(CONSTRAINTS) and tgt.has_table(CONSTRAINTS)):
        return []
    dbs = ", ".join(str(int(i)) for i in database_ids)
    inside = f'SELECT "TBL_ID" FROM "TBLS" WHERE "DB_ID" IN ({dbs})'
    crossing = src.rows(
        _NAMED.format(side="PARENT_TBL_ID")
        + f'WHERE k."CHILD_TBL_ID" IS NOT NULL AND ((k."PARENT_TBL_ID" IN ({inside}) AND k."CHILD_TBL_ID" NOT IN '
        f'({inside})) OR (k."CHILD_TBL_ID" IN ({inside}) AND k."PARENT_TBL_ID" NOT IN ({inside})))'
    )
    blockers = [
        MergeBlocker(
            "constraint_outside",
            name,
            f"Foreign key '{name}' links '{db}.{table}' with a table of a database that is not being merged: merge "
            "both databases, or drop the foreign key first.",
        )
        for name, db, table in sorted(crossing)
    ]
    if _names_are_global(tgt):
        carried = src.rows(_NAMED.format(side="PARENT_TBL_ID") + f'WHERE k."PARENT_TBL_ID" IN ({inside})')
        taken = {name for (name,) in tgt.rows('SELECT DISTINCT "CONSTRAINT_NAME" FROM "KEY_CONSTRAINTS"')}
        blockers += [
            MergeBlocker(
                "constraint_exists",
                name,
                f"Constraint '{name}' of '{db}.{table}' already exists in the target, where constraint names are "
                "unique metastore-wide (Hive 2.3/3.1): rename it in the source first.",
            )
            for name, db, table in sorted(carried)
            if name in taken
        ]
    return blockers


def _names_are_global(tgt: MetastoreReader) -> bool:
    """Whether the target keys constraints by name (2.3/3.1), not by their table first (4.0): read from its primary
    key."""
    connection = tgt.connection
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, tgt.table(CONSTRAINTS).strip('"`'))
    primary = next((c["columns"] for c in constraints.values() if c.get("primary_key")), [])
    return not primary or primary[0].upper() != "PARENT_TBL_ID"
