"""
Containment: the directories the console may move, trash, create or point a table at.

Each metastore has *governed roots*: its warehouse root, Hive 4's external warehouse root, the extra roots of its
configuration (:class:`~catalog_admin.metastores.MetastoreConfig`) and the databases' locations (and managed
locations) that lie inside one of those (:func:`catalog_admin.hive.locations.root_locations`). The console never
moves, trashes or creates a directory that is not strictly inside one; never moves a directory that another table or
partition also uses, that contains another's location or lies inside another's directory; and never builds a
destination that escapes its parent once normalised (``..``, ``.``, empty segments, ``?``, ``#``, a ``%`` that is not
an escape). ``SET LOCATION`` may not point at, into or above another table's or partition's directory, nor outside the
roots unless the metastore's configuration allows it.

The checks are pure functions over :class:`GovernedRoots` and the :class:`LocationUser` rows of one selector
(:func:`catalog_admin.selectors.locations.location_users`); :func:`move_blockers` is the guard every plan with
directory moves passes through (``build_preview``).
"""

from __future__ import annotations

import posixpath
import re
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import NamedTuple

from catalog_admin.hive.locations import SCHEME, GovernedRoots, canonical, is_inside
from catalog_admin.locations import linked_ancestors, normalize_location
from catalog_admin.selectors.locations import LocationUser, governed_roots, location_users
from catalog_admin.selectors.metastores import Metastore
from operations.preview import DirectoryMove
from operations.rules import Finding

__all__ = (
    "NAMED_LINKS",
    "GovernedRoots",
    "MoveContext",
    "all_ancestors",
    "ancestors",
    "canonical",
    "check_move",
    "check_new_location",
    "governed_roots",
    "is_inside",
    "linked_move_blockers",
    "move_blockers",
    "named_links",
    "new_location_blockers",
    "new_locations_blockers",
    "plan_blockers",
    "unsafe_leaf",
    "unsafe_path",
    "users_near",
)

RULE = "containment"
NAMED_LINKS = 10  # symbolic links a blocker names (the rest are counted)
ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_PLAIN_SEGMENTS = frozenset(("", ".", ".."))  # segments that do not name one directory


class MoveContext(NamedTuple):
    """What a planner knows about one of its moves: whose rows follow the directory (every row of table ``table_id``,
    or the storage descriptors ``sd_ids``), which storage descriptors may lie strictly *above* it (``enclosing``: a
    partition's own table root), and the part of the destination it appended to its parent (``leaf``, with the
    number of path segments it must have). A named tuple: a plan makes one per directory, 100,000 of them."""

    table_id: int | None = None
    sd_ids: frozenset[int] = frozenset()
    enclosing: frozenset[int] = frozenset()
    leaf: str | None = None
    leaf_segments: int = 1

    def allows(self, user: LocationUser, *locations: str) -> bool:
        """Whether ``user`` may be where it is relative to ``locations`` (a move's ends, a new location)."""
        if user.table_id == self.table_id or user.sd_id in self.sd_ids:
            return True
        # An enclosing directory may touch a location only by lying strictly above it: not at it, nor inside it.
        return user.sd_id in self.enclosing and not any(is_inside(user.location, location) for location in locations)


# Pure checks ----------------------------------------------------------------------------------------------------


def ancestors(location: str) -> list[str]:
    """The canonical parent directories of ``location``, nearest first (the bare filesystem root left out)."""
    current, found = canonical(location), []
    match = SCHEME.match(current)
    prefix = match.group(0) if match else ""
    path = current[len(prefix) :]
    while (parent := posixpath.dirname(path)) not in ("", "/", path):
        found.append(prefix + parent)
        path = parent
    return found


def all_ancestors(locations: Iterable[str]) -> list[str]:
    """Every canonical parent directory of any of ``locations``, sorted (as :func:`ancestors`, joined): each walk up
    stops at a directory already found, whose own parents are found with it, so each directory is reached once."""
    found: set[str] = set()
    for location in locations:
        current = canonical(location)
        match = SCHEME.match(current)
        prefix = match.group(0) if match else ""
        path = current[len(prefix) :]
        while (parent := posixpath.dirname(path)) not in ("", "/", path) and prefix + parent not in found:
            found.add(prefix + parent)
            path = parent
    return sorted(found)


@lru_cache(maxsize=1 << 18)
def unsafe_path(location: str) -> str | None:
    """Why ``location`` does not name one directory unambiguously (None: it does): ``..``, ``.`` or empty segments,
    ``?`` and ``#`` (a URI parser cuts the path there), a ``%`` that is no escape (remembered: a move's destination
    is asked twice, by :func:`check_move` and :func:`unsafe_leaf`)."""
    normal = normalize_location(location)
    match = SCHEME.match(normal)
    path = normal[len(match.group(0)) if match else 0 :]
    segments = path.strip("/").split("/") if path.strip("/") else []  # a bucket's or filesystem's root has none
    if not _PLAIN_SEGMENTS.isdisjoint(segments):
        return "it has an empty, '.' or '..' segment"
    if "?" in path or "#" in path:
        return "it contains '?' or '#'"
    if ESCAPE.search(path):
        return "it contains a '%' that is not an escape"
    return None


def unsafe_leaf(destination: str, leaf: str, segments: int) -> str | None:
    """Why the ``leaf`` a planner appended to a parent does not stay a child of it in ``destination``."""
    parts = leaf.split("/")
    if len(parts) != segments:
        return f"'{leaf}' makes {len(parts)} directory level(s) instead of {segments}"
    if any(part in ("", ".", "..") for part in parts) or any(c in leaf for c in "?#\\"):
        return f"'{leaf}' is not a plain directory name"
    if not destination.rstrip("/").endswith("/" + leaf):
        return f"the destination does not end with '{leaf}'"
    return unsafe_path(destination)


def check_move(
    move: DirectoryMove, roots: GovernedRoots, users: Iterable[LocationUser], context: MoveContext
) -> list[Finding]:
    """Blockers for one directory move, given the tables and partitions found at, inside or above its source and
    destination (``users``; those the move takes along are allowed)."""
    findings = []
    for end, location in (("source", move.source), ("destination", move.destination)):
        unsafe = unsafe_path(location)
        if unsafe:
            findings.append(Finding("unsafe_location", RULE, f"The {end} {location} is refused: {unsafe}."))
        elif not roots.governs(location):
            findings.append(
                Finding(
                    "outside_roots",
                    RULE,
                    f"The {end} {location} is outside the directories this console governs ({roots.describe()}): "
                    "it never moves, trashes or creates a directory there.",
                )
            )
    if context.leaf is not None:
        escape = unsafe_leaf(move.destination, context.leaf, context.leaf_segments)
        if escape:
            findings.append(
                Finding("destination_escapes", RULE, f"The destination {move.destination} is refused: {escape}.")
            )
    for user in users:
        if not context.allows(user, move.source, move.destination):
            findings.append(_conflict(move, user))
    return findings


def check_new_location(
    location: str, roots: GovernedRoots, users: Iterable[LocationUser], *, own: MoveContext
) -> list[Finding]:
    """Blockers for pointing a table or partition at ``location`` (``SET LOCATION``, a prefix rewrite)."""
    unsafe = unsafe_path(location)
    if unsafe:
        return [Finding("unsafe_location", RULE, f"The location {location} is refused: {unsafe}.")]
    findings = []
    if not roots.governs(location) and not roots.allow_outside:
        findings.append(
            Finding(
                "outside_roots",
                RULE,
                f"{location} is outside the directories this console governs ({roots.describe()}); allow it with "
                "METASTORE_ALLOW_OUTSIDE_ROOTS_<NAME>=true.",
            )
        )
    for user in users:
        if own.allows(user, location):
            continue
        findings.append(
            Finding(
                "location_in_use",
                RULE,
                f"{location} {_relation(location, user.location)} {user.location}, the directory of {user.owner}: "
                "two tables or partitions would share data.",
            )
        )
    return findings


def _conflict(move: DirectoryMove, user: LocationUser) -> Finding:
    near = move.source if is_inside(user.location, move.source) or is_inside(move.source, user.location) else None
    location = near or move.destination
    return Finding(
        "directory_in_use",
        RULE,
        f"{location} {_relation(location, user.location)} {user.location}, the directory of {user.owner}: moving "
        "it would move or mix that data.",
    )


def _relation(location: str, other: str) -> str:
    if canonical(location) == canonical(other):
        return "is also"
    if is_inside(other, location):
        return "contains"
    return "is inside"


# Reads ----------------------------------------------------------------------------------------------------------


def move_blockers(
    metastore: Metastore, moves: Sequence[DirectoryMove], contexts: Mapping[str, MoveContext]
) -> list[Finding]:
    """The containment guard of every plan with directory moves: each move checked against the roots, against the
    plan's other moves, and against the tables and partitions at, inside or above its source and destination (one
    query per chunk of moves)."""
    if not moves:
        return []
    roots = governed_roots(metastore)
    ends = [canonical(end) for move in moves for end in (move.source, move.destination)]
    above = all_ancestors(ends)
    tables = {c.table_id for c in contexts.values()}
    # A rename moves a whole table: its own rows are left out in the query (there may be 100,000 partitions).
    excluded = next(iter(tables)) if len(tables) == 1 and None not in tables and len(contexts) == len(moves) else None
    users = location_users(metastore, sorted(set(ends)), ancestors=above, excluding_table=excluded)
    return plan_blockers(moves, roots, users, contexts) + linked_move_blockers(moves)


def plan_blockers(
    moves: Sequence[DirectoryMove],
    roots: GovernedRoots,
    users: Sequence[LocationUser],
    contexts: Mapping[str, MoveContext],
) -> list[Finding]:
    """The pure part of :func:`move_blockers`: the moves checked against the roots, against one another
    (:func:`_crossing_moves`) and against ``users``, the tables and partitions found at, inside or above their
    ends. A user its own move takes along is left to the comparison of the moves (:func:`_own_source`): a drop of
    100,000 partitions sweeps its few other users, not its own rows."""
    sources = {canonical(move.source): contexts.get(move.source, MoveContext()) for move in moves}
    own: dict[str, list[LocationUser]] = defaultdict(list)
    others = []
    for user in users:
        source = _own_source(user, sources)
        if source is not None:
            own[source].append(user)
        else:
            others.append(user)
    findings = _crossing_moves(moves, own, contexts)
    near = users_near([end for move in moves for end in (move.source, move.destination)], others)
    for index, move in enumerate(moves):
        at_source, at_destination = near[2 * index], near[2 * index + 1]
        touching = sorted({*at_source, *at_destination}) if at_destination else at_source
        findings += check_move(move, roots, [others[i] for i in touching], contexts.get(move.source, MoveContext()))
    return list(dict.fromkeys(findings))


def _own_source(user: LocationUser, sources: Mapping[str, MoveContext]) -> str | None:
    """The canonical source of the move that takes ``user`` along (``sources``: each move's canonical source and
    context), when ``user``'s directory is that source or lies directly in it (a folder moving whole with its
    partitions): a dropped partition's own row. It touches what that source touches, so :func:`_crossing_moves`
    checks it against the other moves' ends, and its own move allows it. None: any other user."""
    location = canonical(user.location)
    for source in (location, location.rpartition("/")[0]):
        context = sources.get(source)
        if context is not None and (user.sd_id in context.sd_ids or user.table_id == context.table_id):
            return source
    return None


def users_near(locations: Sequence[str], users: Sequence[LocationUser]) -> list[list[int]]:
    """For each of ``locations``, the indexes (ascending) of the ``users`` at, inside or above it: a sorted sweep, not
    a pairwise comparison, whose work grows with the users and the pairs found. Keyed by canonical path with a
    trailing ``/`` (the comparison :func:`is_inside` makes), a user is at or above a location exactly when its key
    is a prefix of the location's, and the locations with that prefix are one sorted range (two binary searches);
    it is inside one exactly when one of its own ``/``-prefixes is that location's key (one lookup each)."""
    keys = [_sweep_key(location) for location in locations]
    order = sorted(range(len(keys)), key=keys.__getitem__)
    ordered = [keys[i] for i in order]
    at: dict[str, list[int]] = defaultdict(list)
    for index, key in enumerate(keys):
        at[key].append(index)
    found: list[list[int]] = [[] for _ in keys]
    for user_index, user in enumerate(users):
        key = _sweep_key(user.location)
        low = bisect_left(ordered, key)
        for position in range(low, bisect_left(ordered, key[:-1] + "0", low)):  # '0' follows '/' in code points
            found[order[position]].append(user_index)  # the location is the user's directory or inside it
        slash = key.rfind("/", 0, len(key) - 1)
        while slash != -1:  # the user lies strictly inside each location keyed by one of its '/'-prefixes
            for index in at.get(key[: slash + 1], ()):
                found[index].append(user_index)
            slash = key.rfind("/", 0, slash)
    return found


def _sweep_key(location: str) -> str:
    """The canonical path with one trailing ``/``: a directory's descendants sort right after it and start with it."""
    return canonical(location).rstrip("/") + "/"


def linked_move_blockers(moves: Sequence[DirectoryMove]) -> list[Finding]:
    """A move whose source or destination is a symbolic link or lies below one would move, trash or create data
    wherever the link points (outside the roots, too): one blocker naming the links."""
    found = linked_ancestors([end for move in moves for end in (move.source, move.destination)])
    if not found:
        return []
    return [
        Finding(
            "symlink_in_path",
            RULE,
            f"{len(found)} directory(ies) of the plan are reached through symbolic link(s): "
            f"{named_links(found.values())}. The console never moves, trashes or deletes through a link.",
        )
    ]


def named_links(links: Iterable[str]) -> str:
    """The first :data:`NAMED_LINKS` of ``links`` (sorted, once each), the rest counted: a bounded blocker message."""
    ordered = sorted(set(links))
    more = f" and {len(ordered) - NAMED_LINKS} more" if len(ordered) > NAMED_LINKS else ""
    return ", ".join(ordered[:NAMED_LINKS]) + more


def new_location_blockers(
    metastore: Metastore, location: str, *, own: MoveContext, above_only: bool = False
) -> list[Finding]:
    """The containment blockers of pointing a table or partition at ``location`` (see :func:`check_new_location`);
    ``above_only``: only directories at or above it count (a prefix rewrite's target directory)."""
    return new_locations_blockers(metastore, [location], own=own, above_only=above_only)


def new_locations_blockers(
    metastore: Metastore, locations: Sequence[str], *, own: MoveContext, above_only: bool = False
) -> list[Finding]:
    """:func:`new_location_blockers` of many locations, their users read in one query."""
    targets = [canonical(location) for location in locations]
    above = sorted({a for target in targets for a in (target, *ancestors(target))})
    found = location_users(metastore, [] if above_only else targets, ancestors=above)
    roots = governed_roots(metastore)
    findings: list[Finding] = []
    for location, target in zip(locations, targets, strict=True):
        users = [u for u in found if is_inside(target, u.location) or (not above_only and _touches(u.location, target))]
        findings += check_new_location(location, roots, users, own=own)
    return findings


def _touches(location: str, other: str) -> bool:
    """``location`` is ``other``, inside it, or above it."""
    return is_inside(location, other) or is_inside(other, location)


def _crossing_moves(
    moves: Sequence[DirectoryMove], own: Mapping[str, Sequence[LocationUser]], contexts: Mapping[str, MoveContext]
) -> list[Finding]:
    """The plan's moves against one another. A source at, inside or above another move's source would move the same
    data twice (or fail half-way). A source at, inside or above another move's destination moves data into a
    directory that move creates or empties: allowed only where that move takes the source's own rows (``own``, by
    canonical source) along, as a swap's new directory takes the old one's place. One sorted pass over every end:
    with a trailing ``/``, the ends inside one follow it, so the ends above each are a stack."""
    ends = [
        _End(index, role, end)
        for index, move in enumerate(moves)
        for role, end in enumerate((move.source, move.destination))  # _SOURCE, _DESTINATION
    ]
    keys = [_sweep_key(end.location) for end in ends]

    def crossing(outer: _End, inner: _End) -> bool:
        if outer.move == inner.move or outer.role == inner.role == _DESTINATION:
            return False
        if outer.role == inner.role == _SOURCE:
            return True
        source, other = (outer, inner) if outer.role == _SOURCE else (inner, outer)
        move = moves[other.move]
        context = contexts.get(move.source, MoveContext())
        return not all(
            context.allows(user, move.source, move.destination) for user in own.get(canonical(source.location), ())
        )

    findings = []
    stack: list[int] = []  # the ends above the current one, outermost first
    for current in sorted(range(len(ends)), key=keys.__getitem__):
        while stack and not keys[current].startswith(keys[stack[-1]]):
            stack.pop()
        outer = next((o for o in reversed(stack) if crossing(ends[o], ends[current])), None)
        if outer is not None:
            findings.append(_crossing(ends[current], ends[outer]))
        stack.append(current)
    return findings


_SOURCE, _DESTINATION = 0, 1


class _End(NamedTuple):
    move: int
    role: int  # _SOURCE or _DESTINATION
    location: str


def _crossing(inner: _End, outer: _End) -> Finding:
    if inner.role == outer.role == _SOURCE:
        consequence = "the plan would move the same data twice"
    else:
        consequence = "the plan would move data into a directory it also moves or creates"
    return Finding(
        "directory_in_use",
        RULE,
        f"{inner.location} {_relation(inner.location, outer.location)} {outer.location}: {consequence}.",
    )
