"""
Where a ``DROP PARTITION`` puts the managed data of the partitions it drops: ``<database location>/
.catalog-admin-trash/<table>/<fingerprint>/<partition name>``, with a journaled move (a revert moves it back).

A folder of the table's own layout whose sub-directories are all dropped (a day ``dt=…/`` of 24 hourly partitions)
moves whole, in one move, to the folder its partitions would each have gone to: the trash ends up the same, with one
move instead of 24 (and one directory for the containment guard to check). Only where the disk and the metastore
prove it: a local folder strictly inside the table root, every partition in it at ``<table root>/<its name>``; its
listing holds only dropped partitions' directories (no file, no link, no other folder); no other table's or
partition's location is at or inside it (:class:`Layout`'s strangers, directory or not); and every partition of the
table named under it is dropped (none kept, none placed elsewhere whose trash place would lie inside the folder's).
Execution lists the folder again before anything moves and refuses the change if it differs
(``DirectoryMove.entries``, ``services/folder_moves.py``). Any other partition moves on its own, as before.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

from django.db import connections

from catalog_admin.locations import (
    TreeSize,
    is_under,
    local_sizes,
    location_filesystem,
    location_scheme,
    normalize_location,
    tree_sizes,
)
from catalog_admin.models import Partition
from catalog_admin.selectors.locations import byte_ordered, strangers_inside
from catalog_admin.selectors.metastores import Metastore
from operations.containment import MoveContext, ancestors, canonical
from operations.planners.partitions.directories import TRASH_DIR
from operations.preview import DirectoryMove
from operations.sql import MetastoreSql
from operations.table_state import TableState

__all__ = (
    "DroppedDirectories",
    "Layout",
    "TrashPlan",
    "layout_folders",
    "read_layout",
    "trash_plan",
    "walk_dropped",
)


@dataclass(frozen=True)
class TrashPlan:
    """The moves of a drop's data to the trash, each move's context for the containment guard, and where each
    dropped partition's directory ends up (``placed``: by location, its place in the trash and its size; a partition
    whose directory does not exist is not there)."""

    moves: tuple[DirectoryMove, ...]
    contexts: Mapping[str, MoveContext]
    placed: Mapping[str, tuple[str, TreeSize | None]]


@dataclass(frozen=True)
class _Folder:
    """A folder of the table's layout above dropped partitions: its location and its path below the table root."""

    location: str
    name: str


@dataclass(frozen=True)
class DroppedDirectories:
    """What the disk says of the dropped partitions' directories (:func:`walk_dropped`): the folders whose every entry
    is a dropped partition's directory (a dropped partition may have none), with each entry's size and the partitions
    in it (``whole``: by partition location), and the size of every other partition's directory that exists
    (``alone``)."""

    whole: Mapping[str, tuple[_Folder, list[dict], Mapping[str, TreeSize]]]
    alone: Mapping[str, TreeSize | None]


Folders = Mapping[_Folder, list[dict]]  # the folders of the table's layout, each with its dropped partitions


def layout_folders(state: TableState, matched: list[dict]) -> Folders:
    """The folders of the table's layout directly above dropped partitions (:func:`_layout_folder`), in order."""
    by_folder: dict[_Folder, list[dict]] = defaultdict(list)
    for partition in matched:
        folder = _layout_folder(state, partition)
        if folder is not None:
            by_folder[folder].append(partition)
    return by_folder


def walk_dropped(matched: list[dict], by_folder: Folders) -> DroppedDirectories:
    """The dropped partitions' directories on disk, the local ones in one descent: each folder of the table's layout
    (``by_folder``) listed with the size under each of its entries, every other directory walked on its own."""
    laid_out = {p["sd__location"] for partitions in by_folder.values() for p in partitions}
    others = [p["sd__location"] for p in matched if p["sd__location"] and p["sd__location"] not in laid_out]
    local = [location for location in others if location_scheme(location) == "file"]
    alone, listed = local_sizes(local, [folder.location for folder in by_folder])
    alone.update(tree_sizes(location for location in others if location_scheme(location) != "file"))
    whole: dict[str, tuple[_Folder, list[dict], dict[str, TreeSize]]] = {}
    odd: list[str] = []  # a directory replaced by a file or a link, or in a folder that cannot be listed
    for folder, partitions in by_folder.items():
        entries = listed.get(folder.location)
        if entries and entries.keys() <= {_leaf(p) for p in partitions} and None not in entries.values():
            sizes = {name: size for name, size in entries.items() if size is not None}  # every one, typed
            whole.update({p["sd__location"]: (folder, partitions, sizes) for p in partitions})
            continue
        for partition in partitions:
            location, leaf = partition["sd__location"], _leaf(partition)
            if entries is None or (leaf in entries and entries[leaf] is None):
                odd.append(location)
            elif leaf in entries:  # else its directory is missing
                alone[location] = entries[leaf]
    alone.update(tree_sizes(odd))
    return DroppedDirectories(whole, alone)


@dataclass(frozen=True)
class Layout:
    """What the metastore says of the table's tree where its folders would move whole: the locations there that are
    not a partition at ``<root>/<its name>`` (``strangers``), and how many partitions are named under each folder
    name (``named``: ``dt=…`` of ``dt=…/hour=…``)."""

    strangers: tuple[str, ...] = ()
    named: Mapping[str, int] = field(default_factory=dict)


def read_layout(metastore: Metastore, state: TableState, by_folder: Folders) -> Layout:
    """The :class:`Layout` of the table's tree over the folders ``by_folder`` (from the first to the last in byte
    order; none without folders): one scan for the strangers, one read of the partitions' names in that range."""
    if not by_folder or not state.location:
        return Layout()
    locations = sorted(folder.location for folder in by_folder)
    names = sorted(folder.name for folder in by_folder)
    sql = MetastoreSql(metastore.alias)
    name = sql.col(Partition, "name")
    ordered = byte_ordered(connections[metastore.alias], name)
    query = (
        f"SELECT {name} FROM {sql.table(Partition)} WHERE {sql.col(Partition, 'table')} = %s "
        f"AND {ordered} >= %s AND {ordered} < %s"
    )
    with connections[metastore.alias].cursor() as cursor:
        cursor.execute(query, [state.table_id, names[0] + "/", names[-1] + "0"])  # '0' follows '/'
        named = Counter(found.rpartition("/")[0] for (found,) in cursor.fetchall())
    strangers = strangers_inside(metastore, state.table_id, state.location, locations[0], locations[-1])
    return Layout(tuple(strangers), named)


def trash_plan(state: TableState, matched: list[dict], walked: DroppedDirectories, layout: Layout) -> TrashPlan:
    """The trash moves of the dropped partitions ``matched`` (id, name, ``sd_id``, ``sd__location``): a whole
    folder where every entry of it is dropped, no other table or partition is at or inside it and every partition
    of the table named under it is among those in it (none kept, none placed elsewhere moving into its place in the
    trash: ``layout``); each partition on its own otherwise."""
    root = f"{state.database_location.rstrip('/')}/{TRASH_DIR}/{state.ref.table}/{state.fingerprint[:12]}"
    occupied = {a for stranger in layout.strangers for a in (canonical(stranger), *ancestors(stranger))}
    planner = _Planner(state, root)
    for partition in matched:
        location = partition["sd__location"]
        found = walked.whole.get(location)
        if found is None:
            if location in walked.alone:
                planner.partition(partition, walked.alone[location])
            continue
        folder, partitions, sizes = found
        if folder.location in planner.contexts:
            continue  # moved whole at its first partition
        if canonical(folder.location) in occupied or layout.named.get(folder.name) != len(partitions):
            if _leaf(partition) in sizes:
                planner.partition(partition, sizes[_leaf(partition)])
        else:
            planner.folder(folder, partitions, sizes)
    return TrashPlan(tuple(planner.moves), planner.contexts, planner.placed)


def _layout_folder(state: TableState, partition: dict) -> _Folder | None:
    """The folder directly above a partition's directory when it may move whole: a local partition of a table with
    two or more partition keys, at ``<table root>/<its name>`` (the folder then lies strictly inside the root)."""
    location, name = partition["sd__location"], partition["name"]
    if len(state.partition_keys) < 2 or not location or not state.location or location_scheme(location) != "file":
        return None
    if normalize_location(location) != f"{normalize_location(state.location).rstrip('/')}/{name}":
        return None
    return _Folder(location.rstrip("/").rsplit("/", 1)[0], name.rsplit("/", 1)[0])


def _leaf(partition: dict) -> str:
    return partition["name"].rsplit("/", 1)[1]


class _Planner:
    """The moves, contexts and places, in the order of the dropped partitions (a folder at its first partition)."""

    def __init__(self, state: TableState, root: str) -> None:
        self.state, self.root = state, root
        self.trash_filesystem = location_filesystem(root)
        self.enclosing = frozenset(() if state.sd_id is None else (state.sd_id,))
        self.moves: list[DirectoryMove] = []
        self.contexts: dict[str, MoveContext] = {}
        self.placed: dict[str, tuple[str, TreeSize | None]] = {}

    def partition(self, partition: dict, size: TreeSize | None) -> None:
        location, destination = partition["sd__location"], f"{self.root}/{partition['name']}"
        self._move(location, destination, 1, size, entries=())
        self.contexts[location] = MoveContext(
            sd_ids=frozenset((partition["sd_id"],)),
            enclosing=self.enclosing,
            leaf=partition["name"],
            leaf_segments=len(self.state.partition_keys),
        )
        self.placed[location] = (destination, size)

    def folder(self, folder: _Folder, partitions: list[dict], sizes: Mapping[str, TreeSize]) -> None:
        destination = f"{self.root}/{folder.name}"
        total = TreeSize(files=sum(s.files for s in sizes.values()), bytes=sum(s.bytes for s in sizes.values()))
        self._move(folder.location, destination, len(sizes), total, entries=tuple(sorted(sizes)))
        self.contexts[folder.location] = MoveContext(
            sd_ids=frozenset(p["sd_id"] for p in partitions),
            enclosing=self.enclosing,
            leaf=folder.name,
            leaf_segments=len(self.state.partition_keys) - 1,
        )
        for partition in partitions:
            leaf = _leaf(partition)
            if leaf in sizes:
                self.placed[partition["sd__location"]] = (f"{destination}/{leaf}", sizes[leaf])

    def _move(
        self, source: str, destination: str, partitions: int, size: TreeSize | None, entries: tuple[str, ...]
    ) -> None:
        self.moves.append(
            DirectoryMove(
                source=source,
                destination=destination,
                partitions_moving=partitions,
                partitions_staying=0,
                files=size.files if size else None,
                bytes=size.bytes if size else None,
                source_exists=True,
                destination_free=True,
                same_filesystem=location_filesystem(source) == self.trash_filesystem,
                prune_source_levels=_emptied_parent_levels(self.state, source, len(entries) > 0),
                entries=entries,
            )
        )


def _emptied_parent_levels(state: TableState, location: str, is_folder: bool) -> int:
    """
    How many of a moved directory's parent folders go with it once empty: Hive's ``deleteParentRecursive`` (one per
    partition key but the last, so ``dt=…/`` of ``dt=…/hour=…``), but only inside the table root, never the root
    itself. An emptied ``dt=…/`` left behind makes Hive's ``MSCK REPAIR TABLE`` fail ("missing partition columns").
    A folder moving whole is itself one of those levels.
    """
    if not state.location or not is_under(location, state.location):
        return 0
    depth = normalize_location(location).count("/") - normalize_location(state.location).count("/")
    return max(0, min(len(state.partition_keys) - 1 - int(is_folder), depth - 1))
