"""
Views follow their databases: a merge that renames a database rewrites the imported views' references to it (both
texts, and the database Spark records for unqualified names), or is blocked naming each view it cannot rewrite safely
(``catalog_admin.hive.view_text``). Without the rewrite ``sales_legacy.v`` (``SELECT … FROM sales.t``) would read the
*target's* ``sales.t`` after the merge.

Set-based like ``operations.merge.validation``: one SQL predicate keeps the candidate views (in a renamed database, a
text naming a renamed database's name anywhere, a Presto/Trino view, or Spark's recorded database renamed), the exact
rule reads those only. The copy plan applies the same rewrite to every row (``copy_plan``: the ``view_text`` and
``view_param`` column rules), so what the preview shows is what arrives.
"""

from __future__ import annotations

from typing import Any

from catalog_admin.hive.view_text import (
    DATABASE_KEYS,
    rewrite_database_param,
    rewrite_view_text,
    view_text_problems,
)
from operations.merge.plan import MergeBlocker, ViewRewrite
from operations.merge.reads import MetastoreReader
from operations.merge.request import MergeRequest
from operations.merge.validation import Offenders, shown

__all__ = ("has_views_to_rewrite", "view_rewrites")

_ENCODED_VIEWS = ("%presto view%", "%trino view%")


def view_rewrites(
    request: MergeRequest, src: MetastoreReader, ids: tuple[int, ...]
) -> tuple[tuple[ViewRewrite, ...], list[MergeBlocker]]:
    """The chosen databases' views rewritten for ``request``'s renames, and one ``view_reference`` blocker counting
    (and naming the first of) the views that cannot be rewritten safely."""
    renames = dict(request.renames)
    if not renames or not ids:
        return (), []
    candidates = _candidates(src, ids, sorted(renames))
    recorded = _recorded_databases(src, [row[0] for row in candidates])
    offenders = Offenders("view_reference", "views")
    rewrites = []
    for tbl_id, database, name, original, expanded in candidates:
        database = database.lower()
        resolves_in = recorded.get(tbl_id)
        problems = view_text_problems(
            original, expanded, renames, check_unqualified=resolves_in is None and database in renames
        )
        if problems:
            offenders.add(f"{shown(f'{database}.{name}')} {'; '.join(problems)}")
            continue
        rewritten = ViewRewrite(
            view=f"{request.new_name(database)}.{name}",
            original_text=rewrite_view_text(original, renames),
            expanded_text=rewrite_view_text(expanded, renames),
            database=rewrite_database_param(DATABASE_KEYS[0], resolves_in, renames),
        )
        if (rewritten.original_text, rewritten.expanded_text, rewritten.database) != (original, expanded, resolves_in):
            rewrites.append(rewritten)
    blockers = offenders.blockers(
        "cannot follow their renamed databases (the merge rewrites only references that can be nothing but a "
        "database): rewrite or drop them in the source, or merge their databases without renaming"
    )
    return tuple(sorted(rewrites, key=lambda v: v.view)), blockers


def has_views_to_rewrite(request: MergeRequest, src: MetastoreReader, ids: tuple[int, ...]) -> bool:
    """Whether any view of the chosen databases may name a renamed database (the copy plan rewrites TBLS's view texts
    then, and pipes TBLS in SQL otherwise)."""
    return bool(request.renames and ids and _candidates(src, ids, sorted(dict(request.renames))))


def _candidates(src: MetastoreReader, ids: tuple[int, ...], renamed: list[str]) -> list[tuple]:
    """Views of the chosen databases that may name a renamed database: TBL_ID, database, name and both texts."""
    texts = ('t."VIEW_ORIGINAL_TEXT"', 't."VIEW_EXPANDED_TEXT"')
    patterns = [f"%{name}%" for name in renamed] + list(_ENCODED_VIEWS)
    mentions = " OR ".join(f"LOWER({text}) LIKE %s" for text in texts for _ in patterns)
    marks = ", ".join(["%s"] * len(renamed))
    keys = ", ".join(["%s"] * len(DATABASE_KEYS))
    sql = (
        'SELECT t."TBL_ID", d."NAME", t."TBL_NAME", t."VIEW_ORIGINAL_TEXT", t."VIEW_EXPANDED_TEXT" FROM "TBLS" t '
        'JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
        f'WHERE t."DB_ID" IN ({", ".join(str(int(i)) for i in ids)}) '
        '  AND (t."VIEW_ORIGINAL_TEXT" IS NOT NULL OR t."VIEW_EXPANDED_TEXT" IS NOT NULL) '
        f'  AND (LOWER(d."NAME") IN ({marks}) OR {mentions} OR t."TBL_ID" IN (SELECT p."TBL_ID" FROM "TABLE_PARAMS" p '
        f'    WHERE p."PARAM_KEY" IN ({keys}) AND LOWER(p."PARAM_VALUE") IN ({marks}))) '
        'ORDER BY d."NAME", t."TBL_NAME"'
    )
    params: list[Any] = [*renamed, *(patterns * len(texts)), *DATABASE_KEYS, *renamed]
    return src.rows(sql, params)


def _recorded_databases(src: MetastoreReader, view_ids: list[int]) -> dict[int, str]:
    """The database Spark records for each view's unqualified names: ``view.catalogAndNamespace.part.1`` (Spark 3),
    else ``view.default.database`` (Spark 2)."""
    if not view_ids:
        return {}
    keys = ", ".join(["%s"] * len(DATABASE_KEYS))
    sql = (
        'SELECT "TBL_ID", "PARAM_KEY", "PARAM_VALUE" FROM "TABLE_PARAMS" '
        f'WHERE "TBL_ID" IN ({", ".join(str(int(i)) for i in view_ids)}) AND "PARAM_KEY" IN ({keys})'
    )
    recorded: dict[int, str] = {}
    for tbl_id, _key, value in sorted(src.rows(sql, DATABASE_KEYS), key=lambda r: DATABASE_KEYS.index(r[1])):
        if value is not None:
            recorded.setdefault(int(tbl_id), value)
    return recorded
