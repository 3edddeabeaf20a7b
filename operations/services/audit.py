"""
The audit trail: append-only records chained by hashes, their verification and their export.

Each record's ``hash`` covers its content and the previous record's hash; ``previous_hash`` is unique,
so two writers can never fork the chain (the loser retries on the new head). ``verify_audit_chain``
recomputes every hash and names the first record that was tampered with in the database.

A chain verifies as well without its last records, so every export carries an anchor, the chain's head hash and
record count when it was taken (:class:`AuditAnchor`); ``verify_audit --expect-head HASH:COUNT`` checks that the
chain still holds that record at that position (``anchor_problem``): a cut tail is detected. CSV exports neutralise
cells a spreadsheet would run as a formula (OWASP's CSV injection advice); JSON exports keep every value exact.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from operations.models import AuditRecord, Execution

__all__ = (
    "GENESIS",
    "AuditAnchor",
    "AuditProblem",
    "anchor_problem",
    "audit_anchor",
    "audit_execution",
    "export_audit",
    "record_audit",
    "verify_audit_chain",
)

GENESIS = "0" * 64
EXPORT_FIELDS = (
    "id", "created_at", "actor", "action", "request_id_ref", "execution_id_ref", "metastore", "database_name",
    "table_name", "statement", "outcome", "counts", "preview_summary", "details", "previous_hash", "hash",
)  # fmt: skip
_RETRIES = 5
# A cell starting with one of these is a formula to a spreadsheet (OWASP, "CSV Injection").
_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True)
class AuditProblem:
    record_id: int
    problem: str


@dataclass(frozen=True)
class AuditAnchor:
    """The chain's head when an export was taken: the last record's hash and how many records the chain held."""

    head_hash: str
    count: int

    def __str__(self) -> str:
        return f"{self.head_hash}:{self.count}"

    @classmethod
    def parse(cls, text: str) -> AuditAnchor:
        """``HASH:COUNT`` or ``HASH`` (count unchecked, -1); raises ``ValueError`` for anything else."""
        head_hash, _, count = text.strip().partition(":")
        if len(head_hash) != 64 or any(c not in "0123456789abcdef" for c in head_hash.lower()):
            raise ValueError(f"'{head_hash}' is not a SHA-256 hash (64 hexadecimal digits).")
        if count and not count.isdigit():
            raise ValueError(f"'{count}' is not a record count.")
        return cls(head_hash.lower(), int(count) if count else -1)


def record_audit(
    *,
    actor: str,
    action: str,
    outcome: str,
    request_id: int | None = None,
    execution_id: int | None = None,
    metastore: str = "",
    database_name: str = "",
    table_name: str = "",
    statement: str = "",
    preview_summary: dict[str, Any] | None = None,
    counts: dict[str, Any] | None = None,
    details: dict[str, Any] | None = None,
) -> AuditRecord:
    """Append one record to the chain."""
    fields = {
        "actor": actor,
        "action": action,
        "outcome": outcome,
        "request_id_ref": request_id,
        "execution_id_ref": execution_id,
        "metastore": metastore,
        "database_name": database_name,
        "table_name": table_name,
        "statement": statement,
        "preview_summary": _summary(preview_summary or {}),
        "counts": counts or {},
        "details": details or {},
    }
    for attempt in range(_RETRIES):
        try:
            with transaction.atomic():
                head = AuditRecord.objects.order_by("-id").values_list("hash", flat=True).first() or GENESIS
                created_at = timezone.now()
                record = AuditRecord(created_at=created_at, previous_hash=head, **fields)
                record.hash = record_hash(record)
                record.save()
                return record
        except IntegrityError:
            if attempt == _RETRIES - 1:
                raise
    raise AssertionError("unreachable")


def audit_execution(execution: Execution, summary: dict[str, Any]) -> AuditRecord:
    """The record of an execution (or a revert) that ended: who, why, what it ran, its counts and outcome;
    ``summary`` is the plan it ran, as a dict."""
    return record_audit(
        actor=execution.actor,
        action="revert" if execution.reverts_id else "execute",
        outcome=execution.state,
        execution_id=execution.pk,
        metastore=execution.metastore,
        database_name=execution.database_name,
        table_name=execution.table_name,
        statement=execution.statement,
        preview_summary=summary,
        counts=execution.actual_counts,
        details={"source": execution.source, "reason": execution.reason, "duration_ms": execution.duration_ms,
                 "error": execution.error},
    )  # fmt: skip


def record_hash(record: AuditRecord) -> str:
    """SHA-256 over the previous hash and the record's canonical content."""
    content = {name: _value(getattr(record, name)) for name in EXPORT_FIELDS if name not in ("id", "hash")}
    payload = json.dumps(content, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


def verify_audit_chain(records: Iterable[AuditRecord] | None = None) -> list[AuditProblem]:
    """Every break in the chain: a changed record (its hash no longer matches) or a missing/reordered one."""
    problems = []
    previous = GENESIS
    for record in records if records is not None else AuditRecord.objects.order_by("id").iterator():
        if record.previous_hash != previous:
            problems.append(AuditProblem(record.pk, "its previous_hash does not match the record before it"))
        if record_hash(record) != record.hash:
            problems.append(AuditProblem(record.pk, "its content does not match its hash"))
        previous = record.hash
    return problems


def audit_anchor() -> AuditAnchor:
    """The chain's anchor now."""
    return _anchor_and_head_id()[0]


def _anchor_and_head_id() -> tuple[AuditAnchor, int]:
    head = AuditRecord.objects.order_by("-id").values_list("id", "hash").first()
    if head is None:
        return AuditAnchor(GENESIS, 0), 0
    return AuditAnchor(head[1], AuditRecord.objects.filter(id__lte=head[0]).count()), head[0]


def anchor_problem(expected: AuditAnchor) -> str | None:
    """Why the chain no longer holds ``expected``'s head record at its position, or ``None`` when it does.

    Records appended since the anchor was taken are fine; a missing head record means the tail was cut.
    """
    current = audit_anchor()
    if expected.head_hash == GENESIS:
        return None if expected.count <= 0 else f"the anchor of {expected.count} records has no head hash"
    record = AuditRecord.objects.filter(hash=expected.head_hash).values_list("id", flat=True).first()
    if record is None:
        return (
            f"no record has the anchored head hash {expected.head_hash}: the chain's tail was removed "
            f"(it now ends at {current.head_hash} with {current.count} records)"
        )
    position = AuditRecord.objects.filter(id__lte=record).count()
    if expected.count >= 0 and position != expected.count:
        return (
            f"the anchored head is record {position} of the chain, not record {expected.count}: "
            "records before it were removed or added"
        )
    return None


def export_audit(records: QuerySet[AuditRecord], fmt: str) -> str:
    """The records (chain order) as CSV or JSON text, with the chain's anchor.

    CSV ends with an anchor line; JSON has top-level ``chain_head`` and ``chain_count``. Records appended while
    exporting are left out, so that the anchor covers every exported record.
    """
    anchor, head_id = _anchor_and_head_id()
    selected = records.filter(id__lte=head_id).order_by("id").iterator()
    rows = [{name: _value(getattr(record, name)) for name in EXPORT_FIELDS} for record in selected]
    if fmt == "json":
        document = {"chain_head": anchor.head_hash, "chain_count": anchor.count, "records": rows}
        return json.dumps(document, indent=2, default=str)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=EXPORT_FIELDS)
    writer.writeheader()
    for row in rows:
        writer.writerow({name: _csv_cell(value) for name, value in row.items()})
    csv.writer(buffer).writerow([f"# chain head {anchor} (check: manage.py verify_audit --expect-head {anchor})"])
    return buffer.getvalue()


def _csv_cell(value: Any) -> Any:
    """A CSV cell a spreadsheet shows as text: JSON for structures, a leading ``'`` before a formula character."""
    if isinstance(value, dict | list):
        value = json.dumps(value, default=str)
    if isinstance(value, str) and value.startswith(_FORMULA_PREFIXES):
        return f"'{value}"
    return value


def _summary(preview: dict[str, Any]) -> dict[str, Any]:
    """The part of a preview worth keeping forever: what it would change, not every step."""
    keep = ("risk", "partitions_touched", "statistics_moved", "statistics_dropped", "row_changes", "moves",
            "blockers", "warnings", "fingerprint", "schema_version", "estimated_seconds")  # fmt: skip
    return {k: preview[k] for k in keep if k in preview}


def _value(value: Any) -> Any:
    return value.isoformat() if hasattr(value, "isoformat") else value
