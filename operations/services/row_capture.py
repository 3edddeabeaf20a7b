"""
The rows an execution's statements delete or replace (its before-image's rows), kept outside the execution's JSON.

``alter_execute`` reads each step's old rows just before the step runs, in its metastore transaction; a
:class:`RowCapture` takes them as the cursor returns them (tuples, never dicts), encodes them in chunks of
:data:`ROWS_PER_CHUNK` (``CapturedRows``: MessagePack compressed with zstd) and writes the chunks with
``bulk_create``, a few statements whatever the size; ``counts`` is what the execution's JSON keeps
(``before_image["captured"]``). Everything is written before the metastore commits, so an execution that dies after
the commit can still be reverted exactly; the rows of an execution that rolled back are removed (``discard``), by
reconcile too.
"""

from __future__ import annotations

from typing import Any

from operations.models import CapturedRows, Execution
from operations.models.executions import DELETED, UPDATED, encode_rows

__all__ = ("DELETED", "ROWS_PER_CHUNK", "UPDATED", "RowCapture", "discard_captured_rows")

ROWS_PER_CHUNK = 20_000
BYTES_PER_WRITE = 8 << 20  # compressed chunks held before a bulk insert


class RowCapture:
    """The rows one execution's statements delete (``kind`` "deleted") or replace ("updated"), per metastore table."""

    def __init__(self, execution: Execution) -> None:
        self.execution = execution
        self.counts: dict[str, dict[str, int]] = {DELETED: {}, UPDATED: {}}  # plain strings: JSON keys
        self._chunks: dict[tuple[str, str], int] = {}
        self._pending: list[CapturedRows] = []
        self._pending_bytes = 0

    def capture(self, cursor: Any, kind: str, table: str, sql: str, params: tuple[Any, ...]) -> None:
        """Run ``sql`` (a SELECT of the rows a step is about to change) and keep what it returns."""
        cursor.execute(sql, params)
        columns = [column[0] for column in cursor.description]
        self.counts[kind].setdefault(table, 0)
        while rows := cursor.fetchmany(ROWS_PER_CHUNK):
            self._add(kind, table, columns, rows)

    def _add(self, kind: str, table: str, columns: list[str], rows: list[Any]) -> None:
        number = self._chunks.get((kind, table), 0)
        self._chunks[(kind, table)] = number + 1
        data = encode_rows(columns, rows)
        self._pending.append(
            CapturedRows(
                execution=self.execution, kind=kind, metastore_table=table, chunk=number, row_count=len(rows), data=data
            )
        )
        self.counts[kind][table] += len(rows)
        self._pending_bytes += len(data)
        if self._pending_bytes >= BYTES_PER_WRITE:
            self.flush()

    def flush(self) -> None:
        """Write the chunks not written yet (the console's database: committed on its own, before the metastore)."""
        if self._pending:
            CapturedRows.objects.bulk_create(self._pending)
        self._pending, self._pending_bytes = [], 0


def discard_captured_rows(execution: Execution) -> None:
    """Remove the rows an execution that never committed captured (nothing to revert)."""
    CapturedRows.objects.filter(execution=execution).delete()
