"""
The history of access changes (issue 28): the audit records of privilege requests and executions — GRANT/REVOKE and
role statements, and their reverts — on one table or database, or naming one principal, newest first, in one query.
"""

from __future__ import annotations

from django.db.models import QuerySet

from operations.models import AuditRecord, ChangeRequest
from operations.privilege_specs import PRIVILEGE_KIND, PRIVILEGE_REVERT_KIND, quoted

__all__ = ("HISTORY_LIMIT", "access_history", "principal_history")

HISTORY_LIMIT = 200
_ACCESS_KINDS = (PRIVILEGE_KIND, PRIVILEGE_REVERT_KIND)


def _access_requests(metastore: str) -> QuerySet[ChangeRequest]:
    return ChangeRequest.objects.filter(metastore=metastore, operation__kind__in=_ACCESS_KINDS)


def access_history(metastore: str, database: str, table: str = "") -> list[AuditRecord]:
    """The newest :data:`HISTORY_LIMIT` audit records of access requests on ``database``(.``table``)."""
    requests = _access_requests(metastore).filter(database_name=database, table_name=table).values("pk")
    records = AuditRecord.objects.filter(request_id_ref__in=requests).order_by("-created_at", "-pk")
    return list(records[:HISTORY_LIMIT])


def principal_history(metastore: str, principal_type: str, name: str) -> list[AuditRecord]:
    """The newest audit records of access requests whose statement names ``principal_type name``."""
    requests = _access_requests(metastore).filter(statement__contains=f"{principal_type} {quoted(name)}").values("pk")
    records = AuditRecord.objects.filter(request_id_ref__in=requests).order_by("-created_at", "-pk")
    return list(records[:HISTORY_LIMIT])
