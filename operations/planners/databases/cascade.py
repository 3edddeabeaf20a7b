"""
``DROP DATABASE [IF EXISTS] d CASCADE`` (issue 27) as Hive 2.3's Driver runs it: ``DDLTask.dropDatabase`` →
``HiveMetaStoreClient.dropDatabase(name, deleteData=true, ignoreUnknownDb, cascade)``, which drops every table of the
database first (``dropTable(name, table, deleteData, true)``: ``HMSHandler.drop_table_core`` each, its data deleted —
a managed table's directory and its partitions' directories outside it, as ``DROP TABLE`` — and one DROP_TABLE each),
then calls ``HMSHandler.drop_database_core`` (2.3's ``metastore/src/java/org/apache/hadoop/hive/metastore/
HiveMetaStore.java``; 3.1 and 4.0 keep its shape): ``default`` is never dropped ("Can not drop default database"),
the database's functions are dropped (``drop_function`` each, one DROP_FUNCTION each:
:mod:`operations.planners.databases.functions`), any table left is dropped the same way,
``ObjectStore.dropDatabase`` deletes its row, DROP_DATABASE is fired, and after the commit the database's directory is
deleted recursively (``wh.deleteDir(db location, true)``).

The console plans all of it set-based: the rows of every table at once (:mod:`operations.planners.drop_table_steps`
with the database's :class:`DropScope`: one ``DELETE`` per metastore table whatever the number of tables), the ACID
bookkeeping of the database (``AcidEventListener``: ``cleanupRecords`` of each transactional table, then of the
database), the database's own rows as ``DROP DATABASE … RESTRICT`` deletes them, and the data to the console's trash,
never deleted: the managed tables' and their partitions' directories outside the database's, then the database's
directory (with everything in it, external tables' data inside it included, as ``deleteDir`` takes it). External
tables' directories elsewhere stay (unless ``external.table.purge`` on 3.1+, as ``DROP TABLE``).

Refused where Hive refuses or where the console cannot do what Hive does: the ``default`` database; open transactions
or locks in the database (Hive's Driver takes an EXCLUSIVE lock on the database, ``analyzeDropDatabase``, which waits
for every lock in it); a materialized view, a table with a storage handler, Hive 2.x indexes, or a table a materialized
view elsewhere is built on (their hooks and bookkeeping are Hive's, as for ``DROP TABLE``); data on a filesystem the
console cannot reach.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.db import connections
from django.db.models import Count

from catalog_admin.hive.locations import canonical, is_inside
from catalog_admin.models import HiveLock, Partition, Table, TableParam, TransactionComponent
from catalog_admin.selectors.metastores import Metastore
from operations.database_specs import DropDatabase
from operations.dependent_views import views_reading
from operations.events.databases import DROP_DATABASE, DROP_TABLE
from operations.events.functions import DROP_FUNCTION
from operations.planners.databases.drop import default_blockers
from operations.planners.databases.functions import function_steps
from operations.planners.databases.locations import RULE, partitions_inside, removal, trash_destination
from operations.planners.databases.plan import DatabasePlan, DirectoryAction, DroppedTable
from operations.planners.databases.state import DatabaseState
from operations.planners.drop_table import data_dropped
from operations.planners.drop_table_steps import DropScope, database_drop_ids, drop_table_steps, metastore_tables
from operations.preview import Step
from operations.risk import RiskCriterion
from operations.rules import Finding
from operations.specs import TableRef

__all__ = ("plan_drop_database_cascade",)

# The table parameters the plan reads (whether Hive deletes the data, and what it leaves to Hive).
_PARAMS = ("EXTERNAL", "external.table.purge", "storage_handler", "transactional")
_MANY_PARTITIONS = 10_000


@dataclass(frozen=True)
class _Table:
    """A table of the database as the plan reads it (one query for all of them)."""

    id: int
    name: str
    type: str
    location: str | None
    params: dict[str, str]
    partitions: int


def plan_drop_database_cascade(metastore: Metastore, state: DatabaseState, spec: DropDatabase) -> DatabasePlan:
    """The plan of ``DROP DATABASE … CASCADE`` of the existing database ``state``: a pure read."""
    tables = _tables(metastore, state.id)
    blockers = default_blockers(state) + _hive_blockers(metastore, state, tables)
    schema_tables = metastore_tables(metastore)
    scope = DropScope("DB_ID", state.id, state.name)
    ids = database_drop_ids(metastore, state.id, schema_tables)
    steps = drop_table_steps(metastore, None, ids, schema_tables, scope)
    steps += function_steps(metastore, state.id, schema_tables)
    directories, warnings, unreachable = _directories(metastore, state, tables)
    blockers += unreachable
    warnings += _dependent_views(metastore, state, tables)
    listing = tuple(_listed(metastore, state, table) for table in tables)
    events = metastore.config.events
    return DatabasePlan(
        metastore=metastore.name,
        schema_version=str(metastore.schema.version),
        spec=spec,
        database=spec.name,
        state_fingerprint=state.fingerprint,
        database_id=state.id,
        delete=True,
        params_delete=tuple(k for k, _ in state.params),
        directories=directories,
        event=DROP_DATABASE if events else "",
        diff=tuple((column, value, None) for column, value in state.row.items() if value is not None),
        blockers=tuple(blockers),
        warnings=tuple(warnings),
        criteria=_criteria(state, tables, steps, directories, warnings),
        inverse={"privileges": len(state.privileges), "cascade": True},
        steps=tuple(steps) if not blockers else (),
        tables=listing,
        table_events=_object_events(events, len(tables), state.functions),
    )


def _object_events(events: bool, tables: int, functions: int) -> tuple[tuple[str, int], ...]:
    """The events of the database's objects by type: a DROP_TABLE per table, a DROP_FUNCTION per function."""
    counts = ((DROP_TABLE, tables), (DROP_FUNCTION, functions))
    return tuple((kind, count) for kind, count in counts if count) if events else ()


def _tables(metastore: Metastore, database_id: int) -> list[_Table]:
    """Every table and view of the database by name, with the parameters the plan needs and its partition count: three
    queries, however many tables."""
    alias = metastore.alias
    rows = (
        Table.objects.using(alias)
        .filter(database_id=database_id)
        .order_by("name")
        .values_list("id", "name", "type", "sd__location")
    )
    params: dict[int, dict[str, str]] = {}
    for table_id, key, value in (
        TableParam.objects.using(alias)
        .filter(table__database_id=database_id, key__in=_PARAMS)
        .values_list("table_id", "key", "value")
    ):
        params.setdefault(int(table_id), {})[str(key)] = str(value or "")
    partitions = dict(
        Partition.objects.using(alias)
        .filter(table__database_id=database_id)
        .values("table_id")
        .annotate(count=Count("pk"))
        .values_list("table_id", "count")
    )
    return [
        _Table(int(i), str(name), str(kind or ""), location, params.get(int(i), {}), int(partitions.get(i, 0)))
        for i, name, kind, location in rows
    ]


def _external(table: _Table) -> bool:
    return table.params.get("EXTERNAL", "").upper() == "TRUE" or table.type == "EXTERNAL_TABLE"


def _drops_data(metastore: Metastore, table: _Table) -> bool:
    is_view = table.type in ("VIRTUAL_VIEW", "MATERIALIZED_VIEW")
    return data_dropped(metastore, is_view=is_view, is_external=_external(table), params=table.params)


def _hive_blockers(metastore: Metastore, state: DatabaseState, tables: list[_Table]) -> list[Finding]:
    """What Hive refuses or keeps to itself, and what would make the console's drop differ from Hive's."""
    found: list[Finding] = []
    kinds = Counter(t.type for t in tables)
    if kinds["MATERIALIZED_VIEW"]:
        found.append(
            Finding(
                "materialized_view",
                RULE,
                f"{state.name} holds {kinds['MATERIALIZED_VIEW']} materialized view(s): drop them with Hive's "
                "DROP MATERIALIZED VIEW first (their rebuild bookkeeping is Hive's).",
            )
        )
    handled = [t.name for t in tables if t.params.get("storage_handler")]
    if handled:
        found.append(
            Finding(
                "storage_handler",
                RULE,
                f"{len(handled)} table(s) of {state.name} are stored by a storage handler, whose drop hook runs in "
                f"Hive's client ({', '.join(handled[:5])}): drop them with Hive first.",
            )
        )
    found += _bookkeeping_blockers(metastore, state)
    return found + _acid_blockers(metastore, state)


def _bookkeeping_blockers(metastore: Metastore, state: DatabaseState) -> list[Finding]:
    """Hive 2.x indexes on the database's tables, and materialized views elsewhere built on them (3.1+)."""
    schema_tables = metastore_tables(metastore)
    quote = connections[metastore.alias].ops.quote_name
    found = []
    with connections[metastore.alias].cursor() as cursor:
        mine = f"SELECT {quote('TBL_ID')} FROM {quote('TBLS')} WHERE {quote('DB_ID')} = %s"
        if "IDXS" in schema_tables:
            cursor.execute(f"SELECT COUNT(*) FROM {quote('IDXS')} WHERE {quote('ORIG_TBL_ID')} IN ({mine})", [state.id])
            if cursor.fetchone()[0]:
                found.append(
                    Finding(
                        "table_has_indexes",
                        RULE,
                        f"Tables of {state.name} have Hive indexes (2.x): drop them with Hive first.",
                    )  # fmt: skip
                )
        if "MV_TABLES_USED" in schema_tables:
            cursor.execute(
                f"SELECT DISTINCT m.{quote('DB_NAME')}, m.{quote('TBL_NAME')} FROM {quote('MV_TABLES_USED')} u "
                f"JOIN {quote('MV_CREATION_METADATA')} m ON m.{quote('MV_CREATION_METADATA_ID')} = "
                f"u.{quote('MV_CREATION_METADATA_ID')} WHERE u.{quote('TBL_ID')} IN ({mine})",
                [state.id],
            )
            views = sorted(f"{db}.{name}" for db, name in cursor.fetchall() if db != state.name)
            if views:
                found.append(
                    Finding(
                        "used_by_materialized_views",
                        RULE,
                        f"Cannot drop table as it is used in the following materialized views {views}",
                    )
                )
    return found


def _acid_blockers(metastore: Metastore, state: DatabaseState) -> list[Finding]:
    """Open transactions writing to the database and locks in it: Hive's Driver takes an EXCLUSIVE lock on the
    database (``DDLSemanticAnalyzer.analyzeDropDatabase``; its tables are outputs without locks of their own, the
    database's covers them) and waits for them."""
    alias, found = metastore.alias, []
    txns = sorted(
        set(TransactionComponent.objects.using(alias).filter(database=state.name).values_list("txn_id", flat=True))
    )
    if txns:
        found.append(
            Finding(
                "open_transactions",
                "acid",
                f"{len(txns)} open transaction(s) write to tables of {state.name} "
                f"({', '.join(map(str, txns[:10]))}): let them finish or abort them first.",
            )
        )
    locks = HiveLock.objects.using(alias).filter(database=state.name).count()
    if locks:
        found.append(
            Finding(
                "locks_held",
                "acid",
                f"{locks} lock(s) are held or waited for in {state.name}: Hive's DROP DATABASE … CASCADE would wait "
                "for them.",
            )
        )
    return found


def _directories(
    metastore: Metastore, state: DatabaseState, tables: list[_Table]
) -> tuple[tuple[DirectoryAction, ...], list[Finding], list[Finding]]:
    """The trash moves in Hive's order of deletion (outside partitions, outside tables, the database's directories):
    the directories Hive deletes outside the database's (each under a governed root, no link), then the database's,
    all in the database's place in the trash (``<its parent>/.catalog-admin-trash/<name>.db/<fingerprint[:12]>/``:
    ``database``, ``managed``, ``tables/<t>``, ``partitions/<t>/<partition>``; beside the directory instead when it is
    on another filesystem). Returns the actions, the warnings, and the blockers (data the console cannot reach)."""
    database_dirs = [d for d in dict.fromkeys((state.location, state.managed_location)) if d]
    root = trash_destination(database_dirs[0], state.name, state.fingerprint) if database_dirs else ""
    partitions = _partitions(metastore, tables)
    ends = [(location, _trash_for(location, root, state, place)) for location, place in
            _outside_directories(metastore, tables, database_dirs, partitions)]  # fmt: skip
    ends += [(d, _trash_for(d, trash_destination(d, state.name, state.fingerprint), state, name))
             for d, name in zip(database_dirs, ("database", "managed"), strict=False)]  # fmt: skip
    actions: list[DirectoryAction] = []
    warnings: list[Finding] = []
    blockers: list[Finding] = []
    every = sorted(canonical(location) for _table_id, _name, location in partitions)
    for location, destination in ends:
        action, found = removal(
            metastore, location, state.name, state.fingerprint, destination=destination,
            partitions=partitions_inside(location, every),
        )  # fmt: skip
        actions += [action] if action is not None else []
        (warnings if all(f.severity == "warning" for f in found) else blockers).extend(found)
    kept = [t.name for t in tables if _external(t) and not _drops_data(metastore, t)]
    inside = [t.name for t in tables if t.name in kept and t.location and _inside_any(t.location, database_dirs)]
    if kept:
        warnings.append(
            Finding(
                "external_data_kept",
                RULE,
                f"{len(kept)} external table(s) keep their data where it is ({', '.join(kept[:5])})"
                + (
                    f"; {len(inside)} of them lie inside the database's directory, which Hive deletes with "
                    "everything in it: their data goes to the console's trash with it."
                    if inside
                    else "."
                ),
                "warning",
            )
        )
    return tuple(actions), warnings, blockers


def _partitions(metastore: Metastore, tables: list[_Table]) -> list[tuple[int, str, str]]:
    """``(table id, name, location)`` of every partition of the database's tables that has a location (one query)."""
    rows = (
        Partition.objects.using(metastore.alias)
        .filter(table_id__in=[t.id for t in tables])
        .exclude(sd__location=None)
        .values_list("table_id", "name", "sd__location")
    )
    return [(table_id, str(name), str(location)) for table_id, name, location in rows]


def _outside_directories(
    metastore: Metastore, tables: list[_Table], database_dirs: list[str], partitions: list[tuple[int, str, str]]
) -> list[tuple[str, str]]:
    """``(location, place in the trash)`` of the directories Hive deletes that are not inside the database's: managed
    tables' directories, and their partitions' outside their table's (of ``partitions``), each once (one inside
    another goes with it), sorted."""
    dropping = {t.id: t for t in tables if _drops_data(metastore, t)}
    found: dict[str, str] = {}
    for table in dropping.values():
        if table.location and not _inside_any(table.location, database_dirs):
            found[canonical(table.location)] = f"tables/{table.name}"
    for table_id, name, location in partitions:
        if table_id not in dropping:
            continue
        root = dropping[table_id].location
        if (root and is_inside(location, root)) or _inside_any(location, database_dirs):
            continue
        found.setdefault(canonical(location), f"partitions/{dropping[table_id].name}/{name}")
    ordered = sorted(found.items())
    kept: list[tuple[str, str]] = []
    for location, place in ordered:  # sorted: a directory comes before anything inside it
        if kept and is_inside(location, kept[-1][0]):
            continue
        kept.append((location, place))
    return sorted(kept, key=lambda item: (not item[1].startswith("partitions/"), item[0]))


def _inside_any(location: str, roots: list[str]) -> bool:
    return any(is_inside(location, root) for root in roots)


def _trash_for(location: str, root: str, state: DatabaseState, place: str) -> str:
    """``<root>/<place>`` when ``location`` is on the trash root's filesystem, else
    ``<its parent>/.catalog-admin-trash/<name>.db/<fingerprint[:12]>/<place>``, beside it."""
    if root and _store(location) == _store(root):
        return f"{root}/{place}"
    return f"{trash_destination(location, state.name, state.fingerprint)}/{place}"


def _store(location: str) -> tuple[str, str]:
    """The filesystem of ``location``: its scheme and authority (a bucket, a name node)."""
    parts = urlsplit(canonical(location))
    return parts.scheme, parts.netloc


def _dependent_views(metastore: Metastore, state: DatabaseState, tables: list[_Table]) -> list[Finding]:
    """Views in other databases that read the dropped tables: they fail once the tables are gone."""
    views: set[str] = set()
    for table in tables:
        if table.type not in ("VIRTUAL_VIEW", "MATERIALIZED_VIEW"):
            views |= {v for v in views_reading(metastore, TableRef(state.name, table.name)) if
                      v.partition(".")[0] != state.name}  # fmt: skip
    if not views:
        return []
    return [
        Finding(
            "dependent_views",
            "views",
            f"{len(views)} view(s) of other databases read tables of {state.name} and fail once it is dropped "
            f"(Hive does not rewrite view texts): {', '.join(sorted(views)[:20])}.",
            "warning",
        )
    ]


def _listed(metastore: Metastore, state: DatabaseState, table: _Table) -> DroppedTable:
    if table.type in ("VIRTUAL_VIEW", "MATERIALIZED_VIEW"):
        data = "none"
    elif _drops_data(metastore, table):
        data = "trash"
    else:
        inside = table.location and _inside_any(table.location, [state.location, state.managed_location])
        data = "trash" if inside else "kept"
    return DroppedTable(table.id, table.name, table.type, table.partitions, data, table.location)


def _criteria(
    state: DatabaseState,
    tables: list[_Table],
    steps: list[Step],
    directories: tuple[DirectoryAction, ...],
    warnings: list[Finding],
) -> tuple[RiskCriterion, ...]:
    trashed = [d for d in directories if d.action == "trash"]
    files = sum(d.files or 0 for d in trashed)
    size = sum(d.bytes or 0 for d in trashed)
    about = "about " if any(d.sampled for d in trashed) else ""
    partitions = sum(t.partitions for t in tables)
    statistics = sum(s.expected_rows for s in steps if s.metastore_table in ("PART_COL_STATS", "TAB_COL_STATS"))
    functions = f" and {state.functions:,} function(s)" if state.functions else ""
    criteria = [
        RiskCriterion(
            "database_dropped",
            f"Database {state.name} (id {state.id}) is dropped with its {len(tables):,} table(s) and view(s)"
            f"{functions}.",
        )
    ]
    if tables:
        criteria.append(RiskCriterion("table_dropped", f"{len(tables):,} table(s) and view(s) of {state.name} go."))
    if trashed:
        criteria.append(
            RiskCriterion(
                "data_moved",
                f"{len(trashed):,} director(ies), {about}{files:,} file(s) and {about}{size:,} bytes go to the "
                "console's trash (Hive deletes them).",
            )
        )
    if partitions:
        criteria.append(RiskCriterion("partitions_dropped", f"{partitions:,} partition(s) are dropped."))
    if statistics:
        criteria.append(RiskCriterion("statistics_dropped", f"{statistics:,} column statistics row(s) are dropped."))
    views = " ".join(f.message for f in warnings if f.code == "dependent_views")
    if views:
        criteria.append(RiskCriterion("views_broken", views))
    if partitions >= _MANY_PARTITIONS:
        criteria.append(RiskCriterion("many_partitions", f"{partitions:,} partitions are dropped at once."))
    return tuple(criteria)
