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
from dataclasses import dataclass
from functools import lru_cache

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
    "unsafe_leaf",
    "unsafe_path",
    "users_near",
)

RULE = "containment"
NAMED_LINKS = 10  # symbolic links a blocker names (the rest are counted)
ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


@dataclass(frozen=True)
class MoveContext:
    """What a planner knows about one of its moves: whose rows follow the directory (every row of table ``table_id``,
    or the storage descriptors ``sd_ids``), which storage descriptors may lie strictly *above* it (``enclosing``: a
    partition's own table root), and the part of the destination it appended to its parent (``leaf``, with the
    number of path segments it must have)."""

    table_id: int | None = None
    sd_ids: frozenset[int] = frozenset()
    enclosing: frozenset[int] = frozenset()
    leaf: str | None = None
    leaf_segments: int = 1

    def allows(self, user: LocationUser, *locations: str) -> bool:
        """Whether ``user`` may be where it is relative to ``locations`` (a move's ends, a new location)."""
        if user.table_id == self.table_id or user.sd_id in self.sd_ids:
            return True
        return user.sd_id in self.enclosing and all(
            is_inside(location, user.location, strictly=True)
            for location in locations
            if _touches(user.location, location)
        )


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
    if any(segment in ("", ".", "..") for segment in segments):
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
    """The containment guard of every plan with directory moves: each move checked against the roots and against the
    tables and partitions at, inside or above its source and destination (one query per chunk of moves)."""
    if not moves:
        return []
    roots = governed_roots(metastore)
    ends = [canonical(end) for move in moves for end in (move.source, move.destination)]
    above = all_ancestors(ends)
    tables = {c.table_id for c in contexts.values()}
    # A rename moves a whole table: its own rows are left out in the query (there may be 100,000 partitions).
    excluded = next(iter(tables)) if len(tables) == 1 and None not in tables and len(contexts) == len(moves) else None
    users = location_users(metastore, sorted(set(ends)), ancestors=above, excluding_table=excluded)
    findings = _overlapping_moves(moves) + linked_move_blockers(moves)
    near = users_near([end for move in moves for end in (move.source, move.destination)], users)
    for index, move in enumerate(moves):
        touching = sorted(set(near[2 * index]) | set(near[2 * index + 1]))
        findings += check_move(move, roots, [users[i] for i in touching], contexts.get(move.source, MoveContext()))
    return list(dict.fromkeys(findings))


def users_near(locations: Sequence[str], users: Sequence[LocationUser]) -> list[list[int]]:
    """For each of ``locations``, the indexes (ascending) of the ``users`` at, inside or above it: a sorted sweep, not
    a pairwise comparison. Sorted by path with a trailing ``/``, the directories inside one location are one range
    (two binary searches); those above it are its ``/``-prefixes (one lookup each). Candidates are then confirmed with
    the exact comparison (:func:`_touches`)."""
    keys = [_sweep_key(user.location) for user in users]
    order = sorted(range(len(users)), key=keys.__getitem__)
    ordered = [keys[i] for i in order]
    by_key: dict[str, list[int]] = defaultdict(list)
    for index, key in enumerate(keys):
        by_key[key].append(index)
    above: dict[str, frozenset[int]] = {"": frozenset()}

    def users_above(key: str) -> frozenset[int]:
        """The users at ``key`` (a directory with its trailing ``/``) or at a directory above it, remembered."""
        if key not in above:
            parent = key[: key.rfind("/", 0, len(key) - 1) + 1]
            above[key] = users_above(parent) | frozenset(by_key.get(key, ()))
        return above[key]

    found = []
    for location in locations:
        key = _sweep_key(location)
        low = bisect_left(ordered, key)
        candidates = set(order[low : bisect_left(ordered, key[:-1] + "0", low)])  # '0' follows '/' in code points
        candidates.update(users_above(key))  # every '/'-prefix of the key: its directories above, each asked once
        found.append(sorted(i for i in candidates if _touches(users[i].location, location)))
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


def _overlapping_moves(moves: Sequence[DirectoryMove]) -> list[Finding]:
    """Two moves of one plan whose directories overlap would move each other's data (or fail half-way)."""
    findings = []
    ordered = sorted(moves, key=lambda m: canonical(m.source))
    for first, second in zip(ordered, ordered[1:], strict=False):
        if is_inside(second.source, first.source):
            findings.append(
                Finding(
                    "directory_in_use",
                    RULE,
                    f"{second.source} {_relation(second.source, first.source)} {first.source}: the plan would move "
                    "the same data twice.",
                )
            )
    return findings
