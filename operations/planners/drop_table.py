"""
``DROP TABLE [IF EXISTS] t [PURGE]`` and ``DROP VIEW [IF EXISTS] v``: the table's rows go (one statement per metastore
table, :mod:`.drop_table_steps`; kept in the before-image, so a revert undrops it with the same ids), and a managed
table's data — its directory and the partitions' directories outside it — goes to the console's trash, PURGE and
``auto.purge`` included: the console never deletes data. An EXTERNAL table is metadata only, as in Hive (unless
``external.table.purge`` says otherwise on 3.1+, where Hive deletes its data: then it goes to the trash too).

Hive's rules (``DDLTask.dropTable`` 2.3/3.1, ``DropTableOperation`` 4.0): DROP TABLE on a view and DROP VIEW on a
table are refused with ``ErrorMsg.DROP_COMMAND_FOR_VIEWS`` / ``DROP_COMMAND_FOR_TABLES``; a materialized view or a
table with a storage handler is left to Hive (its hooks run in Hive's client); a table a materialized view is built
on is refused (``HMSHandler.drop_table_core``: "Cannot drop table as it is used in the following materialized views").
Open transactions and locks on the table block, as Hive's EXCLUSIVE lock would wait for them.

``IF EXISTS`` on a table that does not exist (nor its database): Hive does nothing and succeeds
(``DDLSemanticAnalyzer.analyzeDropTable`` asks ``getTable`` not to throw). The plan says so and changes nothing
(:func:`plan_drop_absent`, as ``CREATE TABLE IF NOT EXISTS`` on an existing table); execution only checks, under the
metastore transaction, that the table is still absent. Without ``IF EXISTS`` the console refuses a missing table
naming it (Hive 2.3+ also ignores it while ``hive.exec.drop.ignorenonexistent`` is true, its default: the console
prefers to catch a mistyped name).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, replace

from django.conf import settings
from django.db import connections

from catalog_admin.locations import (
    SampledSize,
    TreeSize,
    filesystem_for,
    is_under,
    local_sampled_size,
    location_scheme,
    tree_sizes,
)
from catalog_admin.models import Database, HiveLock, Partition, Table, TransactionComponent
from catalog_admin.selectors.metastores import Metastore
from operations.containment import MoveContext
from operations.dependent_views import dependent_views_warning
from operations.planners.common import build_preview, hive_seconds, metadata_only_hive, snapshot
from operations.planners.data_scope import sample_indices
from operations.planners.drop_table_steps import drop_ids, drop_table_steps, metastore_tables
from operations.planners.partitions.directories import TRASH_DIR
from operations.preview import DirectoryMove, HiveComparison, Preview, TableSnapshot
from operations.risk import risk_of
from operations.rules import Finding, check_alter_form
from operations.specs import DropTable, TableRef
from operations.table_state import TableState

__all__ = (
    "absence_fingerprint",
    "data_dropped",
    "drops_data",
    "plan_drop_absent",
    "plan_drop_table",
    "sampled_directory_size",
    "trash_root",
)

Inventory = Mapping[str, TreeSize | SampledSize | None]  # a directory's size by location (None: not countable)

# Hive's ErrorMsg texts (10134, 10135) for the wrong form, by the finding ``check_alter_form`` reports.
WRONG_FORM = {
    "alter_table_on_view": Finding(
        "drop_table_on_view", "views", "To drop a view you need to use the DROP VIEW command."
    ),
    "alter_view_on_table": Finding(
        "drop_view_on_table", "views", "To drop a base table you need to use the DROP TABLE command."
    ),
}


def plan_drop_table(metastore: Metastore, state: TableState, spec: DropTable) -> Preview:
    """The plan of ``DROP TABLE`` / ``DROP VIEW`` on ``state``: a pure read."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        # The table directory's files and bytes (for display: the whole directory is one rename) are listed while
        # the metastore is read: the listing waits on the disk, the reads on the database.
        inside, outside = _partition_directories(metastore, state) if drops_data(metastore, state) else ([], [])
        root = state.location if drops_data(metastore, state) else None
        listing = pool.submit(_inventory, metastore, root, inside) if root else None
        tables = metastore_tables(metastore)
        form = [WRONG_FORM[f.code] for f in check_alter_form(written_on_view=spec.on_view, is_view=state.is_view)]
        blockers = form + _hive_blockers(metastore, state, tables) + _acid_blockers(metastore, state)
        ids = drop_ids(metastore, state, tables)
        steps = drop_table_steps(metastore, state, ids, tables) if not blockers else []
        inventory = listing.result() if listing is not None else {}
    moves = tuple(_trash_moves(state, outside, inventory)) if drops_data(metastore, state) else ()
    partitions = sum(s.expected_rows for s in steps if s.metastore_table == "PARTITIONS")
    stats = sum(s.expected_rows for s in steps if s.metastore_table in ("PART_COL_STATS", "TAB_COL_STATS"))
    preview = build_preview(
        metastore,
        state,
        spec,
        steps=steps,
        after=snapshot(state, type="(dropped)", location=None),
        blockers=blockers + _unreachable_blockers(state, outside) if moves or outside else blockers,
        warnings=_warnings(metastore, state, spec, moves, outside),
        moves=moves,
        move_contexts={move.source: MoveContext(table_id=state.table_id) for move in moves},
        partitions_touched=partitions,
        statistics_dropped=stats,
        drops=partitions,
        hive=HiveComparison(str(metastore.schema.version), partitions, stats, hive_seconds(partitions, stats)),
        inverse={"table_state": _stored_state(state), "trash": [m.destination for m in moves]},
    )
    return replace(preview, blockers=tuple(dict.fromkeys(WRONG_FORM.get(f.code, f) for f in preview.blockers)))


def plan_drop_absent(metastore: Metastore, spec: DropTable) -> Preview:
    """``DROP TABLE|VIEW IF EXISTS`` of a table that does not exist: a plan that changes nothing, saying so."""
    what = "View" if spec.on_view else "Table"
    noop = Finding(
        "absent_noop",
        "ddl",
        f"{what} {spec.target} does not exist: IF EXISTS makes this a no-op (Hive does nothing and succeeds); "
        "nothing will change.",
        "warning",
    )
    absent = TableSnapshot(spec.target.database, spec.target.table, "", None, None, None, None, None, (), (), (), ())
    return Preview(
        metastore=metastore.name,
        schema_version=str(metastore.schema.version),
        spec=spec,
        statement=spec.to_ddl(),
        state_fingerprint=absence_fingerprint(metastore, spec.target),
        before=absent,
        after=absent,
        steps=(),
        moves=(),
        blockers=(),
        warnings=(noop,),
        hive=metadata_only_hive(metastore),
        estimated_seconds=0.0,
        risk=risk_of(()),
        inverse={"noop": True},
    )


def absence_fingerprint(metastore: Metastore, ref: TableRef) -> str:
    """What a no-op drop depends on: the database's id (or none) and that no table has the name."""
    database = list(Database.objects.on(metastore).filter(name=ref.database).values_list("id", flat=True))
    taken = list(
        Table.objects.using(metastore.alias)
        .filter(database__name=ref.database, name=ref.table)
        .values_list("id", flat=True)
    )
    return hashlib.sha256(json.dumps(["absent", database, taken]).encode()).hexdigest()[:32]


def drops_data(metastore: Metastore, state: TableState) -> bool:
    """Whether Hive deletes the table's data (``checkTableDataShouldBeDeleted``): a managed table's, or on 3.1+ an
    external one's whose ``external.table.purge`` is true. A view has none."""
    return data_dropped(metastore, is_view=state.is_view, is_external=state.is_external, params=state.params)


def data_dropped(metastore: Metastore, *, is_view: bool, is_external: bool, params: Mapping[str, str | None]) -> bool:
    """:func:`drops_data` of a table known by its kind and parameters (a database's drop reads many at once)."""
    if is_view:
        return False
    if not is_external:
        return True
    purge = (params.get("external.table.purge") or "").lower() == "true"
    return purge and metastore.schema.capabilities.drop_honours_external_table_purge


def trash_root(state: TableState) -> str:
    """``<database location>/.catalog-admin-trash/<table>/<state fingerprint>``, as DROP PARTITION's trash."""
    return f"{state.database_location.rstrip('/')}/{TRASH_DIR}/{state.ref.table}/{state.fingerprint[:12]}"


def _stored_state(state: TableState) -> dict:
    """What the undrop needs of the table as it was: its state (the revert's plan is built on it)."""
    return asdict(state)


def _hive_blockers(metastore: Metastore, state: TableState, tables: frozenset[str]) -> list[Finding]:
    findings = []
    if state.table_type == "MATERIALIZED_VIEW":
        findings.append(
            Finding(
                "materialized_view",
                "ddl",
                f"{state.ref} is a materialized view: drop it with Hive's "
                "DROP MATERIALIZED VIEW (its rebuild bookkeeping is Hive's).",
            )  # fmt: skip
        )
    if state.params.get("storage_handler"):
        findings.append(
            Finding(
                "storage_handler",
                "ddl",
                f"{state.ref} is stored by {state.params['storage_handler']}: its "
                "storage handler's drop hook runs in Hive's client, so drop it with Hive.",
            )  # fmt: skip
        )
    if "MV_TABLES_USED" in tables:
        views = _materialized_views_using(metastore, state.table_id)
        if views:
            findings.append(
                Finding(
                    "used_by_materialized_views",
                    "ddl",
                    f"Cannot drop table as it is used in the following materialized views {views}",
                )  # fmt: skip
            )
    if "IDXS" in tables and _has_indexes(metastore, state.table_id):
        findings.append(
            Finding("table_has_indexes", "ddl", f"{state.ref} has Hive indexes (2.x): drop them with Hive first.")
        )
    return findings


def _materialized_views_using(metastore: Metastore, table_id: int) -> list[str]:
    quote = connections[metastore.alias].ops.quote_name
    with connections[metastore.alias].cursor() as cursor:
        cursor.execute(
            f"SELECT m.{quote('DB_NAME')}, m.{quote('TBL_NAME')} FROM {quote('MV_TABLES_USED')} u "
            f"JOIN {quote('MV_CREATION_METADATA')} m ON m.{quote('MV_CREATION_METADATA_ID')} = "
            f"u.{quote('MV_CREATION_METADATA_ID')} WHERE u.{quote('TBL_ID')} = %s",
            [table_id],
        )
        return sorted(f"{db}.{name}" for db, name in cursor.fetchall())


def _has_indexes(metastore: Metastore, table_id: int) -> bool:
    quote = connections[metastore.alias].ops.quote_name
    with connections[metastore.alias].cursor() as cursor:
        cursor.execute(
            f"SELECT COUNT(*) FROM {quote('IDXS')} WHERE {quote('ORIG_TBL_ID')} = %s OR {quote('INDEX_TBL_ID')} = %s",
            [table_id, table_id],
        )
        return bool(cursor.fetchone()[0])


def _acid_blockers(metastore: Metastore, state: TableState) -> list[Finding]:
    """Open transactions writing to the table and locks on it: Hive's drop takes an EXCLUSIVE lock and waits."""
    alias, db, name = metastore.alias, state.ref.database, state.ref.table
    findings = []
    txns = sorted(
        set(TransactionComponent.objects.using(alias).filter(database=db, table=name).values_list("txn_id", flat=True))
    )
    if txns:
        findings.append(
            Finding(
                "open_transactions",
                "acid",
                f"{len(txns)} open transaction(s) write to {db}.{name} "
                f"({', '.join(map(str, txns[:10]))}): let them finish or abort them first.",
            )  # fmt: skip
        )
    locks = HiveLock.objects.using(alias).filter(database=db, table=name).count()
    if locks:
        findings.append(
            Finding(
                "locks_held",
                "acid",
                f"{locks} lock(s) are held or waited for on {db}.{name}: Hive's DROP TABLE would wait for them.",
            )  # fmt: skip
        )
    return findings


def _partition_directories(metastore: Metastore, state: TableState) -> tuple[list[str], list[tuple[str, str]]]:
    """The locations of the partitions under the table's directory, and ``(name, location)`` of those outside it
    (Hive deletes those one by one, ``dropPartitionsAndGetLocations``), each sorted by name."""
    rows = (
        Partition.objects.using(metastore.alias)
        .filter(table_id=state.table_id)
        .exclude(sd__location=None)
        .order_by("name")
        .values_list("name", "sd__location")
    )
    root = state.location
    inside: list[str] = []
    outside: list[tuple[str, str]] = []
    for name, location in rows:
        if root and is_under(str(location), root):
            inside.append(str(location))
        else:
            outside.append((str(name), str(location)))
    return inside, outside


def _inventory(metastore: Metastore, location: str, partitions: Sequence[str]) -> Inventory:
    """``{location: its size}`` if it exists, else ``{}``: :func:`sampled_directory_size`, or what :func:`tree_sizes`
    says of anything it cannot read (another filesystem's listed in full; a local location that is no directory — a
    link, a file — or is missing as what it is, so the move of a link is planned and refused by the containment
    guard, never dropped from the plan)."""
    size = sampled_directory_size(location, partitions)
    return {location: size} if size is not None else tree_sizes([location], metastore.name)


def sampled_directory_size(location: str, partitions: Sequence[str]) -> SampledSize | None:
    """The size of the local directory ``location``, counted through descriptors with no link followed, at most
    ``CATALOG_DROP_SAMPLE_PARTITIONS`` of the ``partitions`` inside it (sorted; evenly spaced) counted and scaled to
    all (:func:`local_sampled_size`); None for another filesystem, or a location the descent cannot read."""
    if location_scheme(location) != "file":
        return None
    picked = [partitions[i] for i in sample_indices(len(partitions), settings.CATALOG_DROP_SAMPLE_PARTITIONS)]
    return local_sampled_size(location, partitions, picked)


def _trash_moves(state: TableState, outside: list[tuple[str, str]], inventory: Inventory) -> list[DirectoryMove]:
    """The table's directory to ``<trash>/table``, each partition directory outside it to ``<trash>/partitions/…``
    (those missing on disk stay out of the plan). ``inventory``: the table directory's size, listed already."""
    root = trash_root(state)
    partitions = state.partitions.count
    ends = [(state.location, f"{root}/table", partitions - len(outside))] if state.location else []
    ends += [(location, f"{root}/partitions/{name}", 1) for name, location in outside]
    sizes: Inventory = {**tree_sizes(location for _name, location in outside), **inventory}
    moves = []
    for source, destination, moving in ends:
        if source not in sizes:  # missing (or on a filesystem that cannot be checked)
            continue
        size = sizes[source]
        moves.append(
            DirectoryMove(
                source=source,
                destination=destination,
                partitions_moving=moving,
                partitions_staying=0,
                files=size.files if size else None,
                bytes=size.bytes if size else None,
                source_exists=True,
                destination_free=True,
                same_filesystem=True,
                sampled=size.sample if isinstance(size, SampledSize) else None,
            )
        )
    return moves


def _unreachable_blockers(state: TableState, outside: list[tuple[str, str]]) -> list[Finding]:
    """Data the console cannot move to its trash (no client for its filesystem) would be orphaned: refuse."""
    sources = ([state.location] if state.location else []) + [location for _name, location in outside]
    unreachable = [source for source in sources if filesystem_for(source).exists(source) is None]
    if not unreachable:
        return []
    return [
        Finding(
            "filesystem_unreachable",
            "ddl",
            f"{len(unreachable)} data director(ies) of {state.ref} are on a filesystem this console cannot reach "
            f"(first: {unreachable[0]}): the data could not be moved to the trash.",
        )
    ]


def _warnings(
    metastore: Metastore,
    state: TableState,
    spec: DropTable,
    moves: tuple[DirectoryMove, ...],
    outside: list[tuple[str, str]],
) -> list[Finding]:
    warnings = dependent_views_warning(metastore, state.ref, "fail once it is dropped")
    if state.is_view:
        return warnings
    if not drops_data(metastore, state):
        warnings.append(
            Finding(
                "external_data_kept", "ddl", "The table is external: its data files stay where they are.", "warning"
            )  # fmt: skip
        )
        return warnings
    if spec.purge or (state.params.get("auto.purge") or "").lower() == "true":
        warnings.append(
            Finding(
                "purge_to_trash",
                "ddl",
                "PURGE (or auto.purge) is honoured as a move to the console's trash: data is never deleted outright.",
                "warning",
            )  # fmt: skip
        )
    missing = (1 if state.location else 0) + len(outside) - len(moves)
    if missing > 0:
        warnings.append(
            Finding(
                "directories_missing",
                "ddl",
                f"{missing} of the table's data directories do not exist on disk.",
                "warning",
            )  # fmt: skip
        )
    return warnings
