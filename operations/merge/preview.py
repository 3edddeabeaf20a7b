"""
``merge_preview``: what merging databases of a source metastore into a target would do, read from both and written
nowhere. Counts are one ``COUNT(*)`` per Hive table scoped by subqueries; ids are the target's current next ids.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import replace
from functools import partial
from typing import Any

from django.db import DatabaseError

from catalog_admin.errors import ApplicationError, ErrorCode, NotFound, metastore_unavailable
from catalog_admin.hive.locations import normalize_location
from catalog_admin.hive.names import is_valid_name
from catalog_admin.selectors.metastores import Metastore, get_metastore
from operations.merge.constraints import constraint_blockers
from operations.merge.data_preview import data_copy_preview
from operations.merge.estimate import estimate_duration
from operations.merge.plan import Conversion, DatabaseImport, MergeBlocker, MergePreview, NotCarried, TableImport
from operations.merge.reads import MetastoreReader, read_beside
from operations.merge.request import MergeRequest
from operations.merge.scope import CARRIED_TABLES, NOT_CARRIED, sequence_of, tally
from operations.merge.validation import input_blockers
from operations.merge.views import view_rewrites
from operations.merge.write_ids import WRITE_ID_TABLE, WriteIdState, write_id_blockers, write_id_states
from operations.models import MergeImport

__all__ = ("merge_preview",)

CATALOG = "hive"  # Hive's default catalog (Warehouse.DEFAULT_CATALOG_NAME), where 2.3's databases land on 3.x/4.x
# What the target's new columns get, as Hive's own upgrade scripts fill them
# (standalone-metastore/…/sql/postgres/upgrade-3.2.0-to-4.0.0-alpha-1.postgres.sql).
FILLED_VALUES = {
    "CTLG_NAME": f"'{CATALOG}' (the target's default catalog)",
    "CAT_NAME": f"'{CATALOG}' (the target's default catalog)",
    "ENGINE": "'hive' (statistics computed by Hive; HIVE-22046 in Hive's 4.0 upgrade script)",
    "TYPE": "'NATIVE' (a database of the metastore itself; HIVE-24396 in Hive's 4.0 upgrade script)",
    "WRITE_ID": "0 (HIVE-19416's default)",
}


def merge_preview(request: MergeRequest) -> MergePreview:
    """The merge preview of ``request``; raises ApplicationError (named) for bad input, never writes."""
    if request.source == request.target:
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            f"Source and target are both '{request.source}': merge one metastore into another.",
            {"source": request.source, "target": request.target},
        )
    source, target = get_metastore(request.source), get_metastore(request.target)
    try:
        return _preview(request, source, target)
    except DatabaseError as exc:
        raise metastore_unavailable(exc) from exc


def _preview(request: MergeRequest, source: Metastore, target: Metastore) -> MergePreview:
    src, tgt = MetastoreReader(source.alias), MetastoreReader(target.alias)
    chosen = _chosen_databases(request, source, src)
    request = replace(request, databases=tuple(sorted(chosen)))
    _check_renames(request, target)
    ids = tuple(db_id for db_id, _ in chosen.values())
    databases = tuple(
        DatabaseImport(
            name=name,
            new_name=request.new_name(name),
            location=location or "",
            new_location=request.rewrite(location) or "",
            tables=src.scalar('SELECT COUNT(*) FROM "TBLS" WHERE "DB_ID" = %s', [db_id]),
        )
        for name, (db_id, location) in sorted(chosen.items())
    )
    write_ids = write_id_states(request, src, tgt, list(ids))
    tables = _table_imports(src, tgt, ids)
    if write_ids:
        tables += (TableImport(table=WRITE_ID_TABLE, rows=len(write_ids)),)
    views, view_blockers = view_rewrites(request, src, ids)
    data_copy, data_blockers = data_copy_preview(request, source, target, src, ids)
    return MergePreview(
        request=request,
        source_version=str(source.schema.version),
        target_version=str(target.schema.version),
        databases=databases,
        tables=tables,
        blockers=(*_blockers(request, source, target, src, tgt, databases, ids), *view_blockers, *data_blockers),
        conversions=_conversions(src, tgt) + _write_id_conversions(src, write_ids),
        not_carried=tuple(NotCarried(t, _count_all(src, t), why) for t, why in NOT_CARRIED if src.has_table(t)),
        estimate=estimate_duration(next((t.rows for t in tables if t.table == "PARTITIONS"), 0)),
        views=views,
        data_copy=data_copy,
    )


def _chosen_databases(request: MergeRequest, source: Metastore, src: MetastoreReader) -> dict[str, tuple[int, str]]:
    """Name → (DB_ID, DB_LOCATION_URI) of the databases to import (all of the source's by default)."""
    sql = 'SELECT "NAME", "DB_ID", "DB_LOCATION_URI" FROM "DBS"'
    params: list[Any] = []
    if source.schema.has_catalogs:
        sql, params = sql + ' WHERE "CTLG_NAME" = %s', [CATALOG]
    found = {name.lower(): (int(db_id), location) for name, db_id, location in src.rows(sql, params)}
    for name in request.databases:
        if name not in found:
            raise NotFound("database", name, metastore=source.name)
    return {n: found[n] for n in request.databases} if request.databases else found


def _check_renames(request: MergeRequest, target: Metastore) -> None:
    """Every rename names a chosen database and a new name Hive accepts (MetaStoreUtils.validateName), and no two
    databases arrive under one name."""
    for old, new in request.renames:
        if old not in request.databases:
            raise _invalid(f"Rename '{old}={new}' names database '{old}', which is not being merged.", old)
        if not is_valid_name(new, target.schema.version):
            raise _invalid(f"Rename '{old}={new}': '{new}' is not a database name Hive accepts.", new)
    arriving = [request.new_name(name) for name in request.databases]
    clash = next((name for name in arriving if arriving.count(name) > 1), None)
    if clash:
        raise _invalid(f"Two databases would arrive as '{clash}': rename one of them.", clash)


def _table_imports(src: MetastoreReader, tgt: MetastoreReader, ids: tuple[int, ...]) -> tuple[TableImport, ...]:
    """Each carried table's tally (:func:`~operations.merge.scope.tally`), two statements at a time on the source
    (``read_beside``), the tables scoped by partitions (the largest) first; then the target's next ids."""
    next_vals = dict(tgt.rows('SELECT "SEQUENCE_NAME", "NEXT_VAL" FROM "SEQUENCE_TABLE"'))
    carried = [table for table in CARRIED_TABLES if src.has_table(table.name)]
    largest_first = sorted(carried, key=lambda table: table.scope_column != "PART_ID")
    counted = read_beside(src.alias, [partial(tally, table=table, database_ids=ids) for table in largest_first])
    tallies = {table.name: found for table, found in zip(largest_first, counted, strict=True)}
    imports = []
    for table in carried:
        rows, source_ids, source_keys = tallies[table.name]
        sequence = sequence_of(table.name) if table.id_column else None
        first_id = _next_id(tgt, table.name, table.id_column, next_vals.get(sequence)) if sequence else None
        imports.append(TableImport(table.name, rows, sequence, first_id, source_ids, source_keys))
    return tuple(imports)


def _next_id(tgt: MetastoreReader, table: str, id_column: str | None, next_val: int | None) -> int | None:
    """The id ``catalog_admin.ids.allocate_ids`` would hand out first now: past the highest used id and NEXT_VAL."""
    if not tgt.has_table(table):
        return None
    used = tgt.scalar(f'SELECT MAX("{id_column}") FROM "{table}"') + 1
    return max(used, int(next_val or 1))


def _blockers(
    request: MergeRequest,
    source: Metastore,
    target: Metastore,
    src: MetastoreReader,
    tgt: MetastoreReader,
    databases: tuple[DatabaseImport, ...],
    ids: tuple[int, ...],
) -> tuple[MergeBlocker, ...]:
    blockers: list[MergeBlocker] = []
    if not target.schema.version.holds_rows_of(source.schema.version):
        blockers.append(_older_target(source, target))
    blockers += _name_conflicts(request, target, src, tgt, databases, ids)
    blockers += input_blockers(request, target, src, tgt, databases, ids)
    blockers += _location_overlaps(request, src, tgt, databases, ids)
    blockers += _open_transactions(request, src)
    blockers += constraint_blockers(src, tgt, list(ids))
    blockers += write_id_blockers(request, src, tgt, list(ids))
    blockers += _unfinished_imports(request)
    return tuple(blockers)


def _unfinished_imports(request: MergeRequest) -> list[MergeBlocker]:
    """An earlier import from the source into the target that stopped before publishing holds reserved ids and
    invisible rows: it is resumed (``merge_metastore --resume``) or reverted first, never left behind a second one."""
    rows = MergeImport.objects.filter(source=request.source, target=request.target, state__in=MergeImport.UNFINISHED)
    return [
        MergeBlocker(
            "unfinished_merge",
            f"merge import #{merge.pk}",
            f"Merge import #{merge.pk} from '{request.source}' into '{request.target}' stopped before publishing "
            f"({merge.state}): resume it (manage.py merge_metastore --resume {merge.pk} --reason R) or revert it "
            "first.",
        )
        for merge in rows.order_by("pk")
    ]


def _older_target(source: Metastore, target: Metastore) -> MergeBlocker:
    message = (
        f"Target '{target.name}' has schema {target.schema.version}, older than the source's "
        f"{source.schema.version}: upgrade the target first (columns of the newer schema have nowhere to go)."
    )
    return MergeBlocker("target_older", target.name, message)


def _name_conflicts(
    request: MergeRequest,
    target: Metastore,
    src: MetastoreReader,
    tgt: MetastoreReader,
    databases: tuple[DatabaseImport, ...],
    ids: tuple[int, ...],
) -> list[MergeBlocker]:
    """Databases whose new name exists in the target, and the tables that would collide in them."""
    new_names = [d.new_name for d in databases]
    sql = 'SELECT "NAME" FROM "DBS" WHERE "NAME" IN ({})'.format(", ".join(["%s"] * len(new_names)) or "NULL")
    params: list[Any] = list(new_names)
    if target.schema.has_catalogs:
        sql, params = sql + ' AND "CTLG_NAME" = %s', [*params, CATALOG]
    existing = {name.lower() for (name,) in tgt.rows(sql, params)} if new_names else set()
    blockers = [
        MergeBlocker(
            "database_exists",
            d.new_name,
            f"Database '{d.new_name}' already exists in '{target.name}': rename '{d.name}' (--rename {d.name}=NEW).",
        )
        for d in databases
        if d.new_name in existing
    ]
    target_tables = _tables_by_database(tgt, existing, target.schema.has_catalogs)
    for db_name, table in _source_tables(src, ids):
        new_db = request.new_name(db_name)
        if (new_db, table) in target_tables:
            subject = f"{new_db}.{table}"
            blockers.append(MergeBlocker("table_exists", subject, f"Table '{subject}' already exists in the target."))
    return blockers


def _tables_by_database(tgt: MetastoreReader, names: set[str], catalogs: bool) -> set[tuple[str, str]]:
    if not names:
        return set()
    sql = (
        'SELECT d."NAME", t."TBL_NAME" FROM "TBLS" t JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
        'WHERE d."NAME" IN ({})'.format(", ".join(["%s"] * len(names)))
    )
    params: list[Any] = sorted(names)
    if catalogs:
        sql, params = sql + ' AND d."CTLG_NAME" = %s', [*params, CATALOG]
    return {(d.lower(), t.lower()) for d, t in tgt.rows(sql, params)}


def _source_tables(src: MetastoreReader, ids: tuple[int, ...]) -> list[tuple[str, str]]:
    sql = 'SELECT d."NAME", t."TBL_NAME" FROM "TBLS" t JOIN "DBS" d ON d."DB_ID" = t."DB_ID" WHERE t."DB_ID" IN ({})'
    return [(d.lower(), t.lower()) for d, t in src.rows(sql.format(_ids(ids)))]


def _location_overlaps(
    request: MergeRequest,
    src: MetastoreReader,
    tgt: MetastoreReader,
    databases: tuple[DatabaseImport, ...],
    ids: tuple[int, ...],
) -> list[MergeBlocker]:
    """Imported database and table locations (after the rules) equal to, inside or around a target table's.
    Partition locations outside their table's directory are not checked yet (a later slice, set-based)."""
    sql = (
        'SELECT s."LOCATION" FROM "TBLS" t JOIN "SDS" s ON s."SD_ID" = t."SD_ID" '
        'WHERE s."LOCATION" IS NOT NULL AND s."LOCATION" <> %s'
    )
    taken = sorted({normalize_location(loc) for (loc,) in tgt.rows(sql, [""])})
    sql = (
        'SELECT d."NAME", t."TBL_NAME", s."LOCATION" FROM "TBLS" t JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
        'JOIN "SDS" s ON s."SD_ID" = t."SD_ID" WHERE t."DB_ID" IN ({}) AND s."LOCATION" IS NOT NULL'
    )
    incoming = [(f"{request.new_name(d.lower())}.{t.lower()}", loc) for d, t, loc in src.rows(sql.format(_ids(ids)))]
    incoming += [(f"database {d.new_name}", d.location) for d in databases if d.location]
    blockers = []
    for subject, location in incoming:
        new_location = request.rewrite(location) or ""
        other = _overlap(new_location, taken)
        if other:
            message = f"'{subject}' would be at {new_location}, which overlaps the target's table at {other}."
            blockers.append(MergeBlocker("location_overlap", subject, message))
    return blockers


def _overlap(location: str, taken: list[str]) -> str | None:
    """A location in ``taken`` (sorted) equal to, inside or containing ``location``."""
    if _contains(taken, location):
        return location
    inside = bisect_left(taken, location + "/")
    if inside < len(taken) and taken[inside].startswith(location + "/"):
        return taken[inside]
    return next((t for t in _ancestors(location) if _contains(taken, t)), None)


def _ancestors(location: str) -> list[str]:
    parts = location.split("/")
    return ["/".join(parts[:n]) for n in range(len(parts) - 1, 1, -1)]


def _contains(taken: list[str], location: str) -> bool:
    i = bisect_left(taken, location)
    return i < len(taken) and taken[i] == location


def _open_transactions(request: MergeRequest, src: MetastoreReader) -> list[MergeBlocker]:
    """Tables of the chosen databases with open transactions (TXNS state 'o', TxnHandler's TXN_OPEN)."""
    if not (src.has_table("TXNS") and src.has_table("TXN_COMPONENTS")) or not request.databases:
        return []
    c_db, c_tbl, c_txn = (src.column("TXN_COMPONENTS", c) for c in ("TC_DATABASE", "TC_TABLE", "TC_TXNID"))
    t_id, t_state = src.column("TXNS", "TXN_ID"), src.column("TXNS", "TXN_STATE")
    marks = ", ".join(["%s"] * len(request.databases))
    sql = (
        f"SELECT DISTINCT c.{c_db}, c.{c_tbl} FROM {src.table('TXN_COMPONENTS')} c "
        f"JOIN {src.table('TXNS')} t ON t.{t_id} = c.{c_txn} WHERE t.{t_state} = %s AND LOWER(c.{c_db}) IN ({marks})"
    )
    return [
        MergeBlocker(
            "open_transactions",
            f"{db}.{tbl}" if tbl else db,
            f"'{db}.{tbl or '*'}' has open transactions in the source: commit or abort them before merging.",
        )
        for db, tbl in src.raw_rows(sql, ["o", *request.databases])
    ]


def _conversions(src: MetastoreReader, tgt: MetastoreReader) -> tuple[Conversion, ...]:
    """Columns the target's schema has and the source's lacks (filled) and the reverse (dropped), per carried table."""
    conversions = []
    if tgt.has_table("CTLGS") and not src.has_table("CTLGS"):
        conversions.append(Conversion("CTLGS", "*", "filled", f"the databases arrive in catalog '{CATALOG}'"))
    for table in CARRIED_TABLES:
        if not src.has_table(table.name):
            continue
        if not tgt.has_table(table.name):
            conversions.append(Conversion(table.name, "*", "dropped", "the target's schema has no such table"))
            continue
        source_columns, target_columns = set(src.columns(table.name)), set(tgt.columns(table.name))
        for column in sorted(target_columns - source_columns):
            value = FILLED_VALUES.get(column, "the target schema's default (NULL where nullable)")
            conversions.append(Conversion(table.name, column, "filled", value))
        for column in sorted(source_columns - target_columns):
            conversions.append(Conversion(table.name, column, "dropped", "the target's schema has no such column"))
    return tuple(conversions)


def _write_id_conversions(src: MetastoreReader, write_ids: tuple[WriteIdState, ...]) -> tuple[Conversion, ...]:
    """From Hive 2.3 (no write ids), what the imported transactional tables' NEXT_WRITE_ID rows start from."""
    if not write_ids or src.has_table(WRITE_ID_TABLE):
        return ()
    value = "the source's NEXT_TXN_ID (Hive 2.3 names deltas by transaction id; see operations.merge.write_ids)"
    return (Conversion(WRITE_ID_TABLE, "NWI_NEXT", "filled", value),)


def _count_all(src: MetastoreReader, table: str) -> int:
    return int(src.raw_rows(f"SELECT COUNT(*) FROM {src.table(table)}")[0][0])


def _ids(ids: tuple[int, ...]) -> str:
    return ", ".join(str(int(i)) for i in ids) or "NULL"


def _invalid(message: str, name: str) -> ApplicationError:
    return ApplicationError(ErrorCode.INVALID_PARAMETER, message, {"name": name})
