"""
Views that read a table, found in the view texts the metastore keeps (TBLS.VIEW_*_TEXT).

Hive never rewrites a view when the table under it changes: renaming the table, or renaming or dropping a column
the view reads, leaves the view failing at query time. Hive's expanded text names every table as `db`.`table`;
Spark keeps the text as written and resolves unqualified names against the database recorded with the view
(``view.catalogAndNamespace.part.1``, or ``view.default.database`` before Spark 3). A view is reported when its
text names the table either way; a text that hides the name (another view in between) is not detectable.
"""

from __future__ import annotations

import re

from django.db.models import Q

from catalog_admin.models import Table, TableParam
from catalog_admin.selectors.metastores import Metastore
from operations.rules import Finding
from operations.specs import TableRef

__all__ = ("VIEW_TYPES", "dependent_views_warning", "views_reading")

VIEW_TYPES = ("VIRTUAL_VIEW", "MATERIALIZED_VIEW")
_SPARK_DATABASE_KEYS = ("view.catalogAndNamespace.part.1", "view.default.database")
_MAX_CANDIDATES = 1000


def views_reading(metastore: Metastore, ref: TableRef) -> tuple[str, ...]:
    """``db.view`` names of the views whose text reads ``ref``, sorted."""
    candidates = list(
        Table.objects.using(metastore.alias)
        .filter(type__in=VIEW_TYPES)
        .filter(Q(view_expanded_text__icontains=ref.table) | Q(view_original_text__icontains=ref.table))
        .exclude(database__name=ref.database, name=ref.table)
        .values_list("id", "database__name", "name", "view_original_text", "view_expanded_text")[:_MAX_CANDIDATES]
    )
    if not candidates:
        return ()
    resolved_in = _spark_view_databases(metastore, [row[0] for row in candidates])
    qualified, unqualified = _patterns(ref)
    found = []
    for view_id, database, name, original, expanded in candidates:
        text = f"{original or ''}\n{expanded or ''}"
        if qualified.search(text) or (
            resolved_in.get(view_id, database).lower() == ref.database.lower() and unqualified.search(text)
        ):
            found.append(f"{database}.{name}")
    return tuple(sorted(found))


def dependent_views_warning(metastore: Metastore, ref: TableRef, consequence: str) -> list[Finding]:
    """A ``dependent_views`` warning naming the views that read ``ref`` (none: no warning)."""
    views = views_reading(metastore, ref)
    if not views:
        return []
    return [
        Finding(
            "dependent_views",
            "views",
            f"{len(views)} view(s) read {ref.database}.{ref.table} and {consequence} "
            f"(Hive does not rewrite view texts): {', '.join(views)}.",
            "warning",
        )
    ]


def _spark_view_databases(metastore: Metastore, view_ids: list[int]) -> dict[int, str]:
    """The database Spark resolves a view's unqualified names in, for views created by Spark."""
    rows = TableParam.objects.using(metastore.alias).filter(table_id__in=view_ids, key__in=_SPARK_DATABASE_KEYS)
    databases: dict[int, str] = {}
    for view_id, key, value in rows.order_by("key").values_list("table_id", "key", "value"):
        if value and (key == _SPARK_DATABASE_KEYS[0] or view_id not in databases):
            databases[view_id] = value
    return databases


def _patterns(ref: TableRef) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """`db`.`table` anywhere, and a bare table name right after FROM or JOIN (not a column or another table)."""
    table, database = _name(ref.table), _name(ref.database)
    qualified = re.compile(rf"(?<![\w`]){database}\s*\.\s*{table}(?![\w`])", re.IGNORECASE)
    unqualified = re.compile(rf"\b(?:from|join)\s+{table}(?![\w`.])", re.IGNORECASE)
    return qualified, unqualified


def _name(identifier: str) -> str:
    """An identifier as a view text may spell it: bare or in backquotes."""
    escaped = re.escape(identifier)
    return rf"(?:`{escaped}`|{escaped})"
