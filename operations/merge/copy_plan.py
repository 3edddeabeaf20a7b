"""
The merge's copy plan: per Hive table, the scoped source ``SELECT``, the target columns and what each gets (the
source's value, shifted by an id offset, renamed, relocated or a filled constant), and the key ranges (units) it is
copied in. A JSON dict: the contract of ``operations.spark.programs.merge``.

Two phases, because Hive's schemas declare foreign keys (PARTITIONS → TBLS → DBS, SDS → SERDES/CDS): rows no DBS or
TBLS row can reach (storage descriptors, SerDes, column descriptors and their children) are copied first in committed,
journaled batches, invisible to Hive; DBS, TBLS and every row that references them are written in ONE final
transaction (``publish``), so no Hive client ever lists a database or table whose rows are still arriving.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.hive.view_text import DATABASE_KEYS
from operations.merge.pipe_sql import literal, location_rewrite
from operations.merge.plan import MergePreview
from operations.merge.preview import CATALOG
from operations.merge.reads import MetastoreReader, quoted_for
from operations.merge.request import MergeRequest
from operations.merge.scope import CARRIED_TABLES, CarriedTable, ranged, tally
from operations.merge.views import has_views_to_rewrite
from operations.merge.write_ids import WRITE_ID_TABLE, WriteIdState, write_id_states

__all__ = (
    "COPY_TABLES",
    "ID_TABLES",
    "PUBLISH_TABLES",
    "build_plan",
    "check_supported",
    "cut_ranges",
    "plan_secrets",
    "shifted_column",
)

# Invisible until published: nothing in DBS/TBLS points at them yet. In foreign-key order (parents first).
COPY_TABLES = (
    "SERDES", "SERDE_PARAMS", "CDS", "COLUMNS_V2", "SDS", "SD_PARAMS", "BUCKETING_COLS", "SORT_COLS",
    "SKEWED_COL_NAMES", "SKEWED_VALUES", "SKEWED_COL_VALUE_LOC_MAP",
)  # fmt: skip
# Written in the one publishing transaction, parents first.
PUBLISH_TABLES = (
    "DBS", "DATABASE_PARAMS", "DB_PRIVS", "FUNCS", "FUNC_RU", "TBLS", "TABLE_PARAMS", "TBL_PRIVS", "TBL_COL_PRIVS",
    "PARTITION_KEYS", "KEY_CONSTRAINTS", "PARTITIONS", "PARTITION_KEY_VALS", "PARTITION_PARAMS", "PART_PRIVS",
    "PART_COL_PRIVS", "TAB_COL_STATS", "PART_COL_STATS",
)  # fmt: skip
BY_NAME = {t.name: t for t in CARRIED_TABLES}
ID_TABLES = tuple(t.name for t in CARRIED_TABLES if t.id_column)
# Columns holding another carried table's id (shifted by that table's offset); own id columns come from scope.py.
FOREIGN_IDS = {
    "DB_ID": "DBS", "TBL_ID": "TBLS", "PART_ID": "PARTITIONS", "SD_ID": "SDS", "SD_ID_OID": "SDS",
    "SERDE_ID": "SERDES", "CD_ID": "CDS", "FUNC_ID": "FUNCS", "PARENT_TBL_ID": "TBLS", "CHILD_TBL_ID": "TBLS",
    "PARENT_CD_ID": "CDS", "CHILD_CD_ID": "CDS",
}  # fmt: skip
# Database names carried in rows other than DBS (2.3/3.1 statistics rows name their table's database).
DATABASE_NAME_COLUMNS = {("DBS", "NAME"), ("TAB_COL_STATS", "DB_NAME"), ("PART_COL_STATS", "DB_NAME")}
LOCATION_COLUMNS = {("SDS", "LOCATION"), ("DBS", "DB_LOCATION_URI"), ("DBS", "MANAGEDLOCATIONURI")}
# A view's texts, and the table parameter Spark records a view's database in (keyed by PARAM_KEY): rewritten for the
# renames (``catalog_admin.hive.view_text``; the preview blocks views it cannot rewrite, ``operations.merge.views``).
VIEW_TEXT_COLUMNS = {("TBLS", "VIEW_ORIGINAL_TEXT"), ("TBLS", "VIEW_EXPANDED_TEXT")}
VIEW_PARAM_COLUMN, VIEW_PARAM_KEY = ("TABLE_PARAMS", "PARAM_VALUE"), "PARAM_KEY"
# Columns the target has and the source lacks, filled as preview.FILLED_VALUES describes.
FILLED = {"CTLG_NAME": CATALOG, "CAT_NAME": CATALOG, "ENGINE": "hive", "TYPE": "NATIVE", "WRITE_ID": 0}
# Rows that point at tables the merge does not carry yet (SKEWED_STRING_LIST) or whose names are global.
UNSUPPORTED = {
    "SKEWED_VALUES": "skewed values (SKEWED_STRING_LIST is not carried yet)",
    "SKEWED_COL_VALUE_LOC_MAP": "skewed value locations (SKEWED_STRING_LIST is not carried yet)",
}
DEFAULT_BATCH_IDS = 50_000
# Where the program finds each side's password in its environment (names only: the plan never holds a password).
PASSWORD_ENV = {"source": "CATALOG_MERGE_SOURCE_PASSWORD", "target": "CATALOG_MERGE_TARGET_PASSWORD"}


def shifted_column(table: str) -> str | None:
    """The target table an id'd column of ``table`` belongs to, for its scope column."""
    carried = BY_NAME[table]
    return table if carried.scope_column == carried.id_column else FOREIGN_IDS.get(carried.scope_column)


def cut_ranges(span: tuple[int, int] | None, batch_ids: int) -> list[list]:
    """``span`` cut into ``[lo, hi]`` ranges of at most ``batch_ids`` ids (none for an empty span)."""
    if span is None:
        return []
    low, high = span
    return [[lo, min(lo + batch_ids - 1, high)] for lo in range(low, high + 1, batch_ids)]


def build_plan(
    request: MergeRequest,
    database_ids: list[int],
    offsets: dict[str, int],
    completed: list[str],
    *,
    id_spans: dict[str, tuple[int, int]],
    batch_ids: int = DEFAULT_BATCH_IDS,
    key_spans: dict[str, tuple[int, int] | None] | None = None,
) -> dict[str, Any]:
    """The program's plan for ``request`` with the reserved ``offsets`` (target id = source id + offset), its units
    cut from ``key_spans`` (each table's scope-column span, as the executed preview read it) or, without them, from
    spans read now. A table's rows are bounded by ``id_spans``, the source ids the target's ids were reserved for: a
    row Hive adds to the source meanwhile stays behind, and no id outside the reserved ranges is ever written."""
    src, tgt = MetastoreReader(request.source), MetastoreReader(request.target)
    steps = []
    for phase, names in (("copy", COPY_TABLES), ("publish", PUBLISH_TABLES)):
        for name in names:
            if not (src.has_table(name) and tgt.has_table(name)):
                continue
            table = BY_NAME[name]
            if table.id_column and name not in id_spans:
                continue  # no ids reserved: nothing of it was in the approved preview
            span = tally(src, table, tuple(database_ids))[2] if key_spans is None else key_spans.get(name)
            ranges = cut_ranges(span, batch_ids)
            if ranges and name in UNSUPPORTED:
                raise _unsupported(name)
            if ranges:
                where = _unit_where(table, database_ids, id_spans.get(name))
                views = name == "TBLS" and has_views_to_rewrite(request, src, tuple(database_ids))
                steps.append(_step(phase, table, src, tgt, offsets, ranges, where, request, views=views))
    write_ids = write_id_states(request, src, tgt, database_ids)
    if write_ids:
        steps.append(_write_id_step(tgt, write_ids))
    return {
        "source": _side("source", request.source, src.vendor),
        "target": _side("target", request.target, tgt.vendor),
        "location_rules": [[r.old, r.new] for r in request.location_rules],
        "renames": dict(request.renames),
        "steps": steps,
        "completed": list(completed),
    }


def check_supported(preview: MergePreview) -> None:
    """Refuse (before anything is reserved) databases holding rows the merge cannot carry yet."""
    for name in UNSUPPORTED:
        if preview.rows_of(name):
            raise _unsupported(name)


def _unsupported(name: str) -> ApplicationError:
    return ApplicationError(
        ErrorCode.INVALID_PARAMETER,
        f"The chosen databases hold {UNSUPPORTED[name]} ({name}): merging them is not supported yet.",
        {"table": name},
    )


def _step(
    phase: str,
    table: CarriedTable,
    src: MetastoreReader,
    tgt: MetastoreReader,
    offsets: dict[str, int],
    ranges: list[list],
    where: str,
    request: MergeRequest,
    *,
    views: bool = False,
) -> dict[str, Any]:
    """One table's step; ``views``: its view texts are rewritten (``view_text``, tokenized in Python, so the step has
    no SQL pipe form)."""
    source_columns = src.columns(table.name)
    booleans = tgt.boolean_columns(table.name)
    columns = []
    for upper, spelled in tgt.columns(table.name).items():
        rule = _column_rule(
            table, upper, source_columns.get(upper), offsets, renamed=bool(request.renames), views=views
        )
        if rule[0] == "copy" and upper in booleans:
            rule[0] = "boolean"  # MySQL's BIT(1) arrives as bytes: b"\x01"
        columns.append([spelled, *rule])
    columns = [c for c in columns if c[1] != "default"]
    read = sorted({c[2] for c in columns if c[2]})
    select = ", ".join(f'"{c}"' for c in read)
    sql = f'SELECT {select} FROM "{table.name}" WHERE {where}'
    scope_offset = offsets.get(shifted_column(table.name) or "", 0)
    return {
        "pipe_select": _pipe_select(table, columns, src, tgt, where, request),
        "table": table.name,
        "phase": phase,
        "select": quoted_for(sql, src.vendor),
        "read": read,
        "scope": quoted_for(f'"{table.scope_column}"', src.vendor),
        "insert_table": tgt.table(table.name),
        "target_scope": tgt.column(table.name, table.scope_column),
        "scope_offset": scope_offset,
        "columns": columns,
        "ranges": ranges,
        "source_settings": _source_settings(table, src),
    }


def _source_settings(table: CarriedTable, src: MetastoreReader) -> dict[str, str]:
    """Planner settings for the source's session that reads ``table``'s units. A table scoped by partitions is read
    through ``"PART_ID" IN (the chosen partitions)``; PostgreSQL estimates those partitions from the average per
    table, far too few for a large table, and probes the table's index once per partition (a nested loop). Both sides
    of a unit are bounded by its key range, so a hash join reads that range once instead: the 1,000,000 statistics
    rows of 200,000 partitions in 0.5 s instead of 2.1 s (``docs/benchmarks.md``)."""
    return {"enable_nestloop": "off"} if src.vendor == "postgresql" and table.scope_column == "PART_ID" else {}


def _write_id_step(tgt: MetastoreReader, write_ids: tuple[WriteIdState, ...]) -> dict[str, Any]:
    """The imported transactional tables' NEXT_WRITE_ID rows (``operations.merge.write_ids``), given as rows: they
    are published with the tables, and carry no id of their own."""
    names = ("NWI_DATABASE", "NWI_TABLE", "NWI_NEXT")
    return {
        "table": WRITE_ID_TABLE,
        "phase": "publish",
        "insert_table": tgt.table(WRITE_ID_TABLE),
        "columns": [[tgt.columns(WRITE_ID_TABLE)[name], "const", None, None] for name in names],
        "rows": [[w.database, w.table, w.next] for w in write_ids],
        "ranges": [],
    }


def _pipe_select(
    table: CarriedTable,
    columns: list[list],
    src: MetastoreReader,
    tgt: MetastoreReader,
    where: str,
    request: MergeRequest,
) -> str | None:
    """PostgreSQL to PostgreSQL: the target's rows as one ``SELECT`` of expressions (ids shifted, names renamed,
    locations rewritten, constants), so the program pipes ``COPY (…) TO STDOUT`` into ``COPY … FROM STDIN`` without a
    row passing through Python. None otherwise (MySQL, or locations in a source database not encoded in UTF-8)."""
    if src.vendor != "postgresql" or tgt.vendor != "postgresql":
        return None
    expressions, laterals = [], []
    for index, (_name, kind, source, value) in enumerate(columns):
        if kind in ("copy", "boolean"):
            expressions.append(f'"{source}"')
        elif kind == "shift":
            expressions.append(f'"{source}" + {int(value)}')
        elif kind == "const":
            expressions.append(str(value) if isinstance(value, int) else literal(str(value)))
        elif kind == "rename":
            cases = " ".join(f"WHEN {literal(old)} THEN {literal(new)}" for old, new in request.renames)
            expressions.append(f'CASE LOWER("{source}") {cases} ELSE "{source}" END' if cases else f'"{source}"')
        elif kind == "view_param":
            keys = ", ".join(literal(k) for k in DATABASE_KEYS)
            cases = " ".join(f"WHEN {literal(old)} THEN {literal(new)}" for old, new in request.renames)
            renamed = f'CASE LOWER("{source}") {cases} ELSE "{source}" END'
            expressions.append(f'CASE WHEN "{value}" IN ({keys}) THEN {renamed} ELSE "{source}" END')
        elif kind == "location":
            if src.rows("SHOW server_encoding")[0][0] != "UTF8":
                return None  # pipe_sql's whitespace and lengths are Unicode characters: other encodings use Python
            rules = [(r.old, r.new) for r in request.location_rules]
            lateral, expression = location_rewrite(f'"{source}"', rules, f"location{index}")
            laterals.append(lateral)
            expressions.append(expression)
        else:
            return None  # view_text: Hive's view texts are tokenized in Python (a view rewrite reads TBLS so)
    tables = " ".join([f'"{table.name}"', *laterals])
    return f"SELECT {', '.join(expressions)} FROM {tables} WHERE {where}"


def _column_rule(
    table: CarriedTable, column: str, source: str | None, offsets: dict[str, int], *, renamed: bool, views: bool
) -> list:
    """``[kind, source column, value]``: copy, shift (value: the offset), rename, location, view_text, view_param
    (value: the key column), const or default (and boolean, set by the caller for a boolean target column)."""
    if source is None:
        return ["const", None, FILLED[column]] if column in FILLED else ["default", None, None]
    owner = table.name if column == table.id_column else FOREIGN_IDS.get(column)
    if owner:
        return ["shift", source, offsets.get(owner, 0)]
    if (table.name, column) in DATABASE_NAME_COLUMNS:
        return ["rename", source, None]
    if (table.name, column) in LOCATION_COLUMNS:
        return ["location", source, None]
    if views and (table.name, column) in VIEW_TEXT_COLUMNS:
        return ["view_text", source, None]
    if renamed and (table.name, column) == VIEW_PARAM_COLUMN:
        return ["view_param", source, VIEW_PARAM_KEY]
    return ["copy", source, None]


def _side(role: str, alias: str, vendor: str) -> dict[str, Any]:
    """How the program connects to the ``role`` side: DB-API parameters and a JDBC URL from the metastore's
    ``DATABASES`` entry, without the password: the program takes it from its environment's ``password_env``
    (:func:`plan_secrets` fills it from the same entry when the driver is launched)."""
    db = settings.DATABASES[alias]
    port = int(db.get("PORT") or (5432 if vendor == "postgresql" else 3306))
    host, name, user = db.get("HOST") or "127.0.0.1", db["NAME"], db.get("USER") or ""
    scheme = "postgresql" if vendor == "postgresql" else "mariadb"
    return {
        "alias": alias,
        "vendor": vendor,
        "dbapi": {"host": host, "port": port, "dbname": name, "user": user},
        "jdbc": f"jdbc:{scheme}://{host}:{port}/{name}?user={user}",
        "password_env": PASSWORD_ENV[role],
    }


def plan_secrets(plan: dict[str, Any]) -> dict[str, str]:
    """The environment the program needs for ``plan``: each side's password from the metastore's ``DATABASES``
    entry (the configuration the console connects with), under the side's ``password_env``; none for a side
    without one. For a driver's environment or the worker's memory only, never for a file, log or row."""
    secrets = {}
    for role in ("source", "target"):
        side = plan[role]
        password = settings.DATABASES[side["alias"]].get("PASSWORD") or ""
        if password:
            secrets[side["password_env"]] = str(password)
    return secrets


def _unit_where(table: CarriedTable, database_ids: list[int], id_span: tuple[int, int] | None) -> str:
    """The rows of one copy unit: in the chosen databases' scope, with the scope column (and the scope's own key, so
    the database reads only the unit's rows) in ``%(low)s``–``%(high)s``, and their own ids in ``id_span``."""
    where = f'{table.where(_ids(database_ids), ranged)} AND "{table.scope_column}" BETWEEN %(low)s AND %(high)s'
    if table.id_column and id_span:
        where += f' AND "{table.id_column}" BETWEEN {int(id_span[0])} AND {int(id_span[1])}'
    return where


def _ids(ids: list[int]) -> str:
    return ", ".join(str(int(i)) for i in ids) or "NULL"
