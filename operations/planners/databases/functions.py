"""
The functions ``DROP DATABASE … CASCADE`` drops with its database (issue 27), as ``drop_database_core`` does (2.3
``metastore/…/HiveMetaStore.java``, 3.1 ``standalone-metastore/…/HiveMetaStore.java``, 4.0 ``HMSHandler``):
``get_functions(db, "*")``, then ``drop_function`` of each, whose ``ObjectStore.dropFunction`` deletes the FUNCS row
with its resource URIs (FUNC_RU, a dependent collection) and whose listeners get one DROP_FUNCTION each
(:mod:`operations.events.functions`). The console deletes them set-based, two statements whatever their number, and
keeps their rows for the undrop as it keeps the tables' (:data:`~operations.planners.drop_table_steps.INSERT_ORDER`).
"""

from __future__ import annotations

from django.db import connections

from catalog_admin.selectors.metastores import Metastore
from operations.preview import Step

__all__ = ("function_steps",)


def function_steps(metastore: Metastore, database_id: int, schema_tables: frozenset[str]) -> list[Step]:
    """The DELETEs of the database's functions, resource URIs first, each with the rows it must delete (none when
    the database has no function or the schema no FUNCS)."""
    if "FUNCS" not in schema_tables:
        return []
    quote = connections[metastore.alias].ops.quote_name
    of_database = f"{quote('DB_ID')} = %s"
    functions = f"SELECT {quote('FUNC_ID')} FROM {quote('FUNCS')} WHERE {of_database}"
    statements = [("FUNC_RU", f"{quote('FUNC_ID')} IN ({functions})"), ("FUNCS", of_database)]
    steps = []
    for table, where in statements:
        if table not in schema_tables:
            continue
        with connections[metastore.alias].cursor() as cursor:
            cursor.execute(f"SELECT COUNT(*) FROM {quote(table)} WHERE {where}", [database_id])
            count = int(cursor.fetchone()[0])
        if count:
            sql = f"DELETE FROM {quote(table)} WHERE {where}"
            steps.append(Step(f"Delete {count} {table} rows of the database's functions", table, "delete", sql,
                              (database_id,), count))  # fmt: skip
    return steps
