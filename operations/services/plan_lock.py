"""
Hive's lock for a plan that moves a transactional table's files (``Preview.table_lock``: a TRUNCATE of a
transactional table and its revert), so that no Hive reader or writer sees the table half moved.

Execution takes Hive's EXCLUSIVE lock on the table (``services/hive_locks``: refused, naming the holders, while a
Hive reader or writer holds one; Hive's later requests wait for it), then lists again every directory the plan's
moves leave or enter: a directory left must hold exactly the entries planned to leave it, a directory entered
nothing at all. Anything else (a file written or removed between the plan, rebuilt just before, and the lock, by a
writer that takes no Hive lock) refuses the execution, naming it, before anything moved. Just before the metastore
commits, the lock is heartbeated inside the transaction: a lock Hive's housekeeping removed meanwhile
(``hive.txn.timeout``) rolls everything back.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.locations import filesystem_for
from catalog_admin.selectors.metastores import get_metastore
from operations.preview import DirectoryMove, Preview
from operations.services.hive_locks import exclusive_table_lock

__all__ = ("plan_lock", "unplanned_entries")

NAMED = 10


@contextmanager
def plan_lock(preview: Preview, *, actor: str) -> Iterator[Callable[[], None]]:
    """For a ``table_lock`` plan, hold Hive's EXCLUSIVE lock on its table for the block, its directories listed
    again first (see the module); yields the check to run inside the metastore transaction just before it commits.
    Any other plan: no lock, and a check that does nothing."""
    if not preview.table_lock:
        yield lambda: None
        return
    target = preview.spec.target
    metastore = get_metastore(preview.metastore)
    agent = f"catalog-admin: {preview.statement}"
    with exclusive_table_lock(metastore, target.database, target.table, user=actor, agent=agent) as held:
        _refuse_unplanned(preview)
        yield held.heartbeat if held is not None else lambda: None


def unplanned_entries(moves: Iterable[DirectoryMove]) -> list[str]:
    """What differs now from ``moves``' plan, sorted: entries of a directory the moves leave that are not planned to
    leave it, or planned entries gone; entries of a directory the moves enter (it must be empty or absent); a left
    directory that can no longer be listed."""
    leaving: dict[str, set[str]] = defaultdict(set)
    entering: set[str] = set()
    for move in moves:
        parent, name = move.source.rstrip("/").rsplit("/", 1)
        leaving[parent].add(name)
        entering.add(move.destination.rstrip("/").rsplit("/", 1)[0])
    found: list[str] = []
    for parent, planned in sorted(leaving.items()):
        entries = filesystem_for(parent).list_directory(parent)
        if entries is None:
            found.append(parent)
            continue
        listed = {entry.name for entry in entries}
        found += [f"{parent}/{name}" for name in sorted(listed ^ planned)]
    for parent in sorted(entering - leaving.keys()):
        entries = filesystem_for(parent).list_directory(parent) or ()
        found += [f"{parent}/{entry.name}" for entry in sorted(entries, key=lambda e: e.name)]
    return found


def _refuse_unplanned(preview: Preview) -> None:
    found = unplanned_entries(preview.moves)
    if not found:
        return
    more = f" and {len(found) - NAMED} more" if len(found) > NAMED else ""
    raise ApplicationError(
        ErrorCode.INVALID_STATE,
        f"{len(found)} entry(ies) of the directories {preview.statement} moves changed since its plan was made "
        f"({', '.join(found[:NAMED])}{more}): written or removed without Hive's lock. Nothing was moved; preview "
        "it again.",
        {"entries": found[:200]},
    )
