"""Executions of previewed plans: the audit record, the before-image and the directory-move journal.

An execution's before-image has two parts: ``Execution.before_image``, the JSON its plan and execution keep (the
plan's inverse, the ids it allocated, the directories it made, and ``captured``: how many rows of each metastore table
its statements deleted or replaced), and the rows themselves, in :class:`CapturedRows` (compressed chunks, one
metastore table each, written set-based during the metastore transaction, never in the execution's JSON).
``Execution.read_before_image`` puts them together for every reader (revert, undrop, the events of a revert); an
execution recorded before ``CapturedRows`` existed (migration 0014) has its rows in the JSON, read as they are.

A chunk is MessagePack compressed with zstd (:func:`encode_rows`); a chunk written before that (JSON, its bytes and
datetimes tagged) still reads, told apart by its first byte.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import msgpack
import zstandard
from django.db import models

__all__ = (
    "DONE",
    "CapturedRows",
    "DirectoryMoveRecord",
    "Execution",
    "decode_rows",
    "encode_rows",
    "jsonable_value",
    "row_value",
)

DELETED, UPDATED = "deleted", "updated"
_IMAGE_KEYS = {DELETED: "deleted_rows", UPDATED: "updated_rows"}  # the before-image's keys for the rows of each kind


class Execution(models.Model):
    """One execution of a preview on a metastore: who, when, what, the counts and how to undo it."""

    class State(models.TextChoices):
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed (nothing changed)"
        RECONCILED = "reconciled", "Reconciled after a crash"

    class Source(models.TextChoices):
        CLI = "cli", "Operator (hive_ddl)"
        UI = "ui", "Browser"
        API = "api", "API"

    metastore = models.CharField(max_length=64)
    database_name = models.CharField(max_length=128)
    table_name = models.CharField(max_length=256)
    statement = models.TextField()
    operation = models.JSONField()
    preview = models.JSONField(help_text="The preview summary this execution ran.")
    fingerprint = models.CharField(max_length=64)
    actor = models.CharField(max_length=150)
    source = models.CharField(max_length=8, choices=Source.choices)
    reason = models.TextField(blank=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.RUNNING)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    expected_counts = models.JSONField(default=dict)
    actual_counts = models.JSONField(default=dict)
    before_image = models.JSONField(default=dict, help_text="Enough to restore every changed row exactly.")
    error = models.TextField(blank=True)
    commit_marker = models.CharField(
        max_length=128, blank=True,
        help_text="The SEQUENCE_TABLE row the metastore transaction writes: present after a crash iff it committed.",
    )  # fmt: skip
    reverts = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="revert_attempts",
        help_text="The execution this one undoes (an attempt: only a succeeded or reconciled one undid it).",
    )  # fmt: skip

    class Meta:
        ordering = ("-started_at",)
        indexes = [models.Index(fields=["metastore", "database_name", "table_name"])]

    def __str__(self) -> str:
        return f"#{self.pk} {self.statement}"

    @property
    def keeps_rows(self) -> bool:
        """Whether the execution kept the rows its statements deleted or replaced (so it can be reverted exactly)."""
        image = self.before_image or {}
        return "captured" in image or "deleted_rows" in image

    def read_before_image(self) -> dict[str, Any]:
        """The whole before-image: the JSON with ``deleted_rows`` and ``updated_rows`` (metastore table -> rows as
        dicts, in the order they were captured; read a value through :func:`row_value`: bytes and datetimes may be
        tagged, as ``{"base64": …}`` / ``{"datetime": …}``)."""
        image = dict(self.before_image or {})
        if "captured" in image:
            image.update({_IMAGE_KEYS[kind]: self._captured(kind) for kind in (DELETED, UPDATED)})
        return image

    def captured_rows(self, kind: str, table: str) -> list[dict[str, Any]]:
        """The rows of one metastore ``table`` the statements deleted (``kind`` "deleted") or replaced ("updated")."""
        image = self.before_image or {}
        if "captured" not in image:
            return list(image.get(_IMAGE_KEYS[kind], {}).get(table, []))
        return self._captured(kind, table).get(table, [])

    def captured_count(self, kind: str, table: str) -> int:
        """How many rows of ``table`` the statements deleted or replaced, without reading them."""
        image = self.before_image or {}
        if "captured" in image:
            return int(image["captured"].get(kind, {}).get(table, 0))
        return len(image.get(_IMAGE_KEYS[kind], {}).get(table, []))

    def _captured(self, kind: str, table: str | None = None) -> dict[str, list[dict[str, Any]]]:
        counts: dict[str, int] = self.before_image["captured"].get(kind, {})
        rows: dict[str, list[dict[str, Any]]] = {name: [] for name in counts if table in (None, name)}
        chunks = CapturedRows.objects.filter(execution=self, kind=kind)
        if table is not None:
            chunks = chunks.filter(metastore_table=table)
        for name, data in chunks.order_by("pk").values_list("metastore_table", "data"):
            columns, values = decode_rows(data)
            rows.setdefault(name, []).extend(dict(zip(columns, row, strict=True)) for row in values)
        return rows

    @property
    def reverted_by(self) -> Execution | None:
        """The revert that undid this execution: a succeeded or reconciled attempt (a failed or refused one left it
        in force, a running one is not settled yet)."""
        return self.revert_attempts.filter(state__in=DONE).order_by("pk").first()

    @property
    def revert_running(self) -> Execution | None:
        """A revert attempt still running (or left running by a dead process until ``reconcile_executions``)."""
        return self.revert_attempts.filter(state=self.State.RUNNING).order_by("pk").first()


DONE = (Execution.State.SUCCEEDED, Execution.State.RECONCILED)  # the states of an execution whose change holds


class DirectoryMoveRecord(models.Model):
    """The journal of one directory move, written before the move and updated after each step."""

    class State(models.TextChoices):
        INTENDED = "intended", "About to move"
        MOVED = "moved", "Moved, metastore not yet committed"
        COMMITTED = "committed", "Moved and committed"
        RESTORED = "restored", "Moved back"

    execution = models.ForeignKey(Execution, on_delete=models.PROTECT, related_name="moves")
    source = models.CharField(max_length=4000)
    destination = models.CharField(max_length=4000)
    state = models.CharField(max_length=16, choices=State.choices, default=State.INTENDED)
    created_parents = models.PositiveSmallIntegerField(
        default=0, help_text="Parent directories of the destination the move created (moving back removes them)."
    )
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.source} → {self.destination} ({self.state})"


class CapturedRows(models.Model):
    """One chunk of the rows an execution's statements deleted or replaced, of one metastore table: the column names
    and the rows, MessagePack compressed with zstd (:func:`encode_rows`)."""

    class Kind(models.TextChoices):
        DELETED = DELETED, "Deleted by a statement"
        UPDATED = UPDATED, "Replaced by an update"

    execution = models.ForeignKey(Execution, on_delete=models.PROTECT, related_name="captured_chunks")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    metastore_table = models.CharField(max_length=128)
    chunk = models.PositiveIntegerField(help_text="The chunk's number among the table's (in capture order).")
    row_count = models.PositiveIntegerField()
    data = models.BinaryField(help_text="zstd-compressed MessagePack (JSON before): [columns, rows].")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["execution", "kind", "metastore_table", "chunk"], name="captured_rows_chunk_unique"
            )
        ]

    def __str__(self) -> str:
        return f"#{self.execution_id} {self.kind} {self.metastore_table} [{self.chunk}]: {self.row_count} rows"


def encode_rows(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> bytes:
    """``columns`` and ``rows`` (as a cursor returns them) as compressed MessagePack: bytes as bytes, a datetime as an
    extension (:data:`_DATETIME`); the C encoder sees every other value once (no per-value Python). A drop of 500,000
    statistics rows encodes in a fifth of JSON's time (``docs/benchmarks.md``, DROP TABLE)."""
    packed = msgpack.packb([list(columns), rows], default=_packable_value, use_bin_type=True)
    return zstandard.ZstdCompressor(level=3).compress(packed)


def decode_rows(data: bytes | memoryview) -> tuple[list[str], list[list[Any]]]:
    """The columns and rows :func:`encode_rows` wrote: values as the metastore returned them. A chunk written as JSON
    (it starts with ``[``; MessagePack's two-item array starts with 0x92) keeps its tagged bytes and datetimes, which
    :func:`row_value` reads."""
    raw = zstandard.ZstdDecompressor().decompress(bytes(data))
    if raw[:1] == b"[":
        columns, rows = json.loads(raw)
    else:
        columns, rows = msgpack.unpackb(raw, raw=False, ext_hook=_unpacked_extension)
    return columns, rows


_DATETIME = 1  # MessagePack extension type of a naive datetime (ISO text), e.g. COMPLETED_TXN_COMPONENTS.CTC_TIMESTAMP


def _packable_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return msgpack.ExtType(_DATETIME, value.isoformat().encode())
    raise _refused(value)


def _unpacked_extension(code: int, data: bytes) -> Any:
    if code != _DATETIME:
        raise ValueError(f"a before-image holds an unknown value type ({code})")
    return datetime.fromisoformat(data.decode())


def jsonable_value(value: Any) -> Any:
    """A value JSON cannot hold as it is, as a before-image's JSON keeps it: bytes and datetimes tagged
    (:func:`row_value` reads them back); any other is refused."""
    if isinstance(value, bytes | bytearray | memoryview):
        return {"base64": base64.b64encode(bytes(value)).decode()}
    if isinstance(value, datetime):  # e.g. COMPLETED_TXN_COMPONENTS.CTC_TIMESTAMP
        return {"datetime": value.isoformat()}
    raise _refused(value)


def _refused(value: Any) -> TypeError:
    """The refusal of a value neither encoding of a before-image keeps."""
    return TypeError(f"a captured {type(value).__name__} cannot be kept in a before-image")


def row_value(value: Any) -> Any:
    """A value of a before-image's row as the metastore held it: one :func:`jsonable_value` tagged (the JSON, or a
    chunk written as JSON) read back, any other as it is."""
    if isinstance(value, dict) and set(value) == {"base64"}:
        return base64.b64decode(value["base64"])
    if isinstance(value, dict) and set(value) == {"datetime"}:
        return datetime.fromisoformat(value["datetime"])
    return value
