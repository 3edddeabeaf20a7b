"""
Refused actions in the audit log: every refusal of a change-request action is recorded, with its error code.

A service decorated with :func:`refusals_audited` that raises an :class:`~catalog_admin.errors.ApplicationError`
(no rights, four-eyes, a stale preview, the wrong state, a blocked plan, bad input) appends one ``refused`` record to
the hash-chained log (``operations.services.audit``) naming who tried what on which request, then raises it as it was.
The record is written after the service's own transaction rolled back, so the refusal is kept and nothing else is.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from catalog_admin.errors import ApplicationError
from operations.models import ChangeRequest
from operations.services.audit import record_audit

__all__ = ("REFUSED", "refusals_audited")

REFUSED = "refused"
P = ParamSpec("P")
R = TypeVar("R")


def refusals_audited(action: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Record every refusal of ``action`` by the decorated service (its ``request``/``user`` arguments say where)."""

    def decorate(service: Callable[P, R]) -> Callable[P, R]:
        signature = inspect.signature(service)

        @functools.wraps(service)
        def audited(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return service(*args, **kwargs)
            except ApplicationError as error:
                record_refusal(signature.bind_partial(*args, **kwargs).arguments, action, error)
                raise

        return audited

    return decorate


def record_refusal(arguments: dict[str, Any], action: str, error: ApplicationError) -> None:
    """One ``refused`` record: the actor, the action, the request (or the table a create named) and the error."""
    request, user = arguments.get("request"), arguments.get("user")
    metastore, database, table, statement = (
        _where(request) if isinstance(request, ChangeRequest) else _where_created(arguments)
    )
    record_audit(
        actor=user.get_username() if user is not None and user.is_authenticated else "scheduler",
        action=action,
        outcome=REFUSED,
        request_id=request.pk if isinstance(request, ChangeRequest) else None,
        metastore=metastore,
        database_name=database,
        table_name=table,
        statement=statement,
        details={
            "code": str(error.code),
            "message": error.message,
            "error_details": json.loads(json.dumps(error.details or {}, default=str)),
        },
    )


def _where(request: ChangeRequest) -> tuple[str, str, str, str]:
    return request.metastore, request.database_name, request.table_name, request.statement


def _where_created(arguments: dict[str, Any]) -> tuple[str, str, str, str]:
    """A refused create names the metastore and, when its statement parsed, the table and the statement."""
    spec = arguments.get("spec")
    metastore = arguments.get("metastore") or ""
    if spec is None:
        return metastore, "", "", ""
    return metastore, spec.target.database, spec.target.table, spec.to_ddl()
