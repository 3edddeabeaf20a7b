"""
The audit trail: append-only records chained by hashes, their verification and their export.

Each record's ``hash`` covers its content and the previous record's hash; ``previous_hash`` is unique,
so two writers can never fork the chain (the loser retries on the new head). ``verify_audit_chain``
recomputes every hash and names the first record that was tampered with in the database.
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
from django.utils import timezone

from operations.models import AuditRecord

__all__ = ("GENESIS", "AuditProblem", "export_audit", "record_audit", "verify_audit_chain")

GENESIS = "0" * 64
EXPORT_FIELDS = (
    "id", "created_at", "actor", "action", "request_id_ref", "execution_id_ref", "metastore", "database_name",
    "table_name", "statement", "outcome", "counts", "preview_summary", "details", "previous_hash", "hash",
)  # fmt: skip
_RETRIES = 5


@dataclass(frozen=True)
class AuditProblem:
    record_id: int
    problem: str


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


def export_audit(records: Iterable[AuditRecord], fmt: str) -> str:
    """The records as CSV or JSON text."""
    rows = [{name: _value(getattr(record, name)) for name in EXPORT_FIELDS} for record in records]
    if fmt == "json":
        return json.dumps(rows, indent=2, default=str)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=EXPORT_FIELDS)
    writer.writeheader()
    for row in rows:
        writer.writerow({k: json.dumps(v, default=str) if isinstance(v, dict | list) else v for k, v in row.items()})
    return buffer.getvalue()


def _summary(preview: dict[str, Any]) -> dict[str, Any]:
    """The part of a preview worth keeping forever: what it would change, not every step."""
    keep = ("risk", "partitions_touched", "statistics_moved", "statistics_dropped", "row_changes", "moves",
            "blockers", "warnings", "fingerprint", "schema_version", "estimated_seconds")  # fmt: skip
    return {k: preview[k] for k in keep if k in preview}


def _value(value: Any) -> Any:
    return value.isoformat() if hasattr(value, "isoformat") else value
