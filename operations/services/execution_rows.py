"""How an execution that ran in one metastore transaction ends: its state, times and counts saved (its before-image
was saved before the commit and is not written again), and what a failure says."""

from __future__ import annotations

import time
from typing import Any

from django.db import DatabaseError
from django.utils import timezone

from catalog_admin.errors import ApplicationError
from catalog_admin.utils.text import first_line
from operations.models import Execution

__all__ = ("end_execution", "failure_text")


def end_execution(execution: Execution, state: str, started: float, **fields: Any) -> None:
    """Save ``execution`` as ended in ``state`` (``started``: ``time.monotonic()`` when it began) with ``fields``."""
    execution.state = state
    execution.finished_at = timezone.now()
    execution.duration_ms = int((time.monotonic() - started) * 1000)
    for name, value in fields.items():
        setattr(execution, name, value)
    # Not the before-image, saved already (at 100,000 partitions its JSON takes seconds to encode again).
    kept = [f.name for f in Execution._meta.concrete_fields if not f.primary_key and f.name != "before_image"]
    execution.save(update_fields=kept)


def failure_text(exc: BaseException) -> str:
    """What a failed execution records: the console's own message, or the error's first line."""
    if isinstance(exc, ApplicationError):
        return exc.message
    if isinstance(exc, DatabaseError):
        return f"database error: {first_line(exc)}"
    return f"{type(exc).__name__}: {first_line(exc)}"
