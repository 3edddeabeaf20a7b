"""
The directory-move journal of one execution, written in batches (``DirectoryMoveRecord``).

Before the first move every planned move is journaled at once (``bulk_create``, INTENDED, with the parent
directories its destination lacks now: those the execution creates, removed again when it is undone); the moves are
then marked MOVED in batches, every :data:`BATCH_MOVES` moves (``CATALOG_MOVE_JOURNAL_BATCH``) or every
:data:`BATCH_SECONDS`, and once after the last, with one ``UPDATE … WHERE id IN (…)`` each. A process that dies in
the middle of a batch leaves moves done but still INTENDED, and moves planned but never started: both INTENDED, told
apart by ``reconcile_executions`` from the disk itself (source gone and destination there: moved; the other way round:
never moved; both or neither: a conflict it names and leaves to a person), never from the journal's state alone.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

from django.conf import settings
from django.utils import timezone

from catalog_admin.locations import filesystem_for
from operations.models import DirectoryMoveRecord, Execution
from operations.preview import DirectoryMove

__all__ = ("BATCH_SECONDS", "MoveJournal", "batch_moves")

BATCH_SECONDS = 1.0


def batch_moves() -> int:
    """How many moves are marked done per journal write (``CATALOG_MOVE_JOURNAL_BATCH``, 500 by default)."""
    return max(1, int(getattr(settings, "CATALOG_MOVE_JOURNAL_BATCH", 500)))


class MoveJournal:
    """The journal of ``moves`` for ``execution``: planned at once, marked done in batches."""

    def __init__(self, execution: Execution, moves: Sequence[DirectoryMove]) -> None:
        missing = _MissingParents(execution.metastore)
        planned = [
            DirectoryMoveRecord(
                execution=execution,
                source=move.source,
                destination=move.destination,
                created_parents=missing.count(move.destination),
            )
            for move in moves
        ]
        self.records = _created(execution, planned) if planned else []
        self._done: list[DirectoryMoveRecord] = []
        self._last_write = time.monotonic()

    def moved(self, record: DirectoryMoveRecord) -> None:
        """``record``'s move is done; written with its batch."""
        self._done.append(record)
        if len(self._done) >= batch_moves() or time.monotonic() - self._last_write >= BATCH_SECONDS:
            self.flush()

    def flush(self) -> None:
        """Write the done-marks not written yet."""
        mark(self._done, DirectoryMoveRecord.State.MOVED)
        self._done = []
        self._last_write = time.monotonic()

    def forget(self, records: Iterable[DirectoryMoveRecord]) -> None:
        """Remove planned moves that were never started (the execution stopped before them)."""
        DirectoryMoveRecord.objects.filter(pk__in=[r.pk for r in records]).delete()


def mark(records: Sequence[DirectoryMoveRecord], state: str) -> None:
    """Journal ``records`` in ``state``, a few statements whatever their number."""
    ids = [record.pk for record in records]
    now = timezone.now()
    for start in range(0, len(ids), 1000):
        DirectoryMoveRecord.objects.filter(pk__in=ids[start : start + 1000]).update(state=state, updated_at=now)
    for record in records:
        record.state = state


def _created(execution: Execution, planned: list[DirectoryMoveRecord]) -> list[DirectoryMoveRecord]:
    """Insert the planned records; their ids in order (re-read where the database returns none from a bulk insert)."""
    records = DirectoryMoveRecord.objects.bulk_create(planned, batch_size=1000)
    if all(record.pk is not None for record in records):
        return records
    return list(DirectoryMoveRecord.objects.filter(execution=execution).order_by("pk"))[-len(planned) :]


class _MissingParents:
    """How many parent directories of a destination do not exist now (a move there creates them), each directory
    asked once however many destinations share it."""

    def __init__(self, metastore: str) -> None:
        self.metastore = metastore
        self._exists: dict[str, bool | None] = {}

    def count(self, location: str) -> int:
        """The parents ``location`` lacks; from then on they count as there (the move creates them, so a later move
        into the same place creates none of them, as when each move was journaled just before it ran)."""
        count = 0
        parent = location.rstrip("/").rpartition("/")[0]
        while parent.rstrip("/").count("/") > 1 and self._parent_exists(parent) is False:
            count += 1
            parent = parent.rpartition("/")[0]
        self._exists[location.rstrip("/")] = True
        parent = location.rstrip("/").rpartition("/")[0]
        for _ in range(count):
            self._exists[parent] = True
            parent = parent.rpartition("/")[0]
        return count

    def _parent_exists(self, location: str) -> bool | None:
        if location not in self._exists:
            self._exists[location] = filesystem_for(location, self.metastore).exists(location)
        return self._exists[location]
