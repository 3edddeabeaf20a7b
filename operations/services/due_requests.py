"""Scheduled requests whose time has come: started by a task enqueued with ``run_after`` when a request is scheduled,
and by every worker's housekeeping (``run_jobs``), so none stays late because its task was lost."""

from __future__ import annotations

from django.utils import timezone

from catalog_admin.errors import ApplicationError, ErrorCode
from operations.choices import ChangeRequestState
from operations.models import ChangeRequest
from operations.services.change_requests import change_request_start

__all__ = ("start_due_requests",)


def start_due_requests() -> int:
    """Move scheduled requests whose time has come to executing, each with a queued job (through the lifecycle,
    audited as ``start``); a request another worker started meanwhile is skipped. Returns how many started."""
    started = 0
    for request in ChangeRequest.objects.filter(state=ChangeRequestState.SCHEDULED, scheduled_for__lte=timezone.now()):
        try:
            change_request_start(request)
        except ApplicationError as exc:
            if exc.code != ErrorCode.INVALID_STATE:
                raise
        else:
            started += 1
    return started
