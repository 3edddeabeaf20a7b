"""
PostgreSQL backend for metastores.

Hive's 2.3 and 3.1 PostgreSQL scripts create the ACID tables (TXNS, HIVE_LOCKS,
COMPACTION_QUEUE …) without quotes, so PostgreSQL folds their names and columns to lower case;
4.0 quotes them in upper case. This backend detects which on connect and maps the canonical
upper-case names of those tables to lower case when needed, so one set of models serves both.
"""

from __future__ import annotations

from django.db.backends.postgresql import base, operations

__all__ = ("DatabaseWrapper",)


def _acid_identifiers() -> frozenset[str]:
    from catalog_admin.models import transactions

    names: set[str] = set()
    for model_name in transactions.__all__:
        model = getattr(transactions, model_name)
        names.add(model._meta.db_table)
        names.update(field.column for field in model._meta.concrete_fields)
    return frozenset(names)


class DatabaseOperations(operations.DatabaseOperations):
    def quote_name(self, name: str) -> str:
        if self.connection.fold_acid_names and name in self.connection.acid_identifiers:
            name = name.lower()
        return super().quote_name(name)


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fold_acid_names = False
        self.acid_identifiers: frozenset[str] = frozenset()

    def init_connection_state(self) -> None:
        super().init_connection_state()
        if not self.acid_identifiers:
            self.acid_identifiers = _acid_identifiers()
        with self.connection.cursor() as cursor:
            cursor.execute(
                "SELECT EXISTS (SELECT 1 FROM information_schema.tables"
                " WHERE table_schema = current_schema() AND table_name = 'txns')"
            )
            self.fold_acid_names = bool(cursor.fetchone()[0])
