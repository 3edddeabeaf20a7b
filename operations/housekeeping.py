"""The worker's housekeeping on schedule: each chore runs when its own interval has passed since it last ran.

``manage.py run_jobs`` asks :meth:`Housekeeping.run_due` at every poll. The chores and their settings:
settling jobs whose worker died and checking, on the host where it ran, a Spark driver a job's end left unconfirmed
(``CATALOG_HOUSEKEEPING_STUCK_JOBS_SECONDS``), forgetting expired Idempotency-Keys
(``CATALOG_HOUSEKEEPING_IDEMPOTENCY_SECONDS``), ``relocations_cleanup``
(``CATALOG_HOUSEKEEPING_RELOCATIONS_CLEANUP_SECONDS``) and sending the notification outbox
(``CATALOG_HOUSEKEEPING_NOTIFICATIONS_SECONDS``). A chore runs at the worker's first poll; one that fails is
logged with its traceback and tried again after its interval, and the others still run. Several workers: a chore
runs in one of them at a time (a named lock on the console's database; the others skip it). Each run is logged
(``operations.housekeeping``, INFO); what a chore did is also returned for the worker's output.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections

from catalog_admin.utils.text import first_line
from operations.models import Relocation
from operations.notifications import deliver_due_notifications
from operations.services.idempotency import purge_expired_idempotency_keys
from operations.services.jobs import release_unconfirmed_drivers
from operations.services.relocation_cleanup import relocations_cleanup
from operations.services.stuck_jobs import settle_stuck_jobs

__all__ = ("CHORES", "Chore", "Housekeeping", "describe_cleanup", "held_alone")

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Chore:
    """A named piece of housekeeping: ``run`` does it and returns what to log; ``interval`` names its setting."""

    name: str
    interval: str
    run: Callable[[], list[str]]


def describe_cleanup(relocation: Relocation) -> str:
    """One line on what ``relocations_cleanup`` did with a relocation (removed a side, or kept units and why)."""
    if relocation.kept:
        first = relocation.kept[0]
        return (
            f"Execution #{relocation.execution_id}: kept {len(relocation.kept)} unit(s) (first: "
            f"{first['location']}: {first['reason']}); the next run tries again."
        )
    removed = "source" if relocation.state == Relocation.State.CLEANED else "copy"
    return f"Execution #{relocation.execution_id}: removed the {removed} ({len(relocation.units)} unit(s))."


def _stuck_jobs() -> list[str]:
    """Settle jobs whose worker died; check the drivers ended jobs left unconfirmed on this host."""
    settled = [f"Job #{s.job_id}: {s.outcome or 'left'} ({s.reason})" for s in settle_stuck_jobs()]
    return settled + release_unconfirmed_drivers()


def _idempotency() -> list[str]:
    purged = purge_expired_idempotency_keys()
    return [f"Forgot {purged} expired Idempotency-Key(s)."] if purged else []


def _notifications() -> list[str]:
    return deliver_due_notifications().lines()


def _relocations() -> list[str]:
    return [describe_cleanup(relocation) for relocation in relocations_cleanup()]


CHORES = (
    Chore("stuck jobs", "CATALOG_HOUSEKEEPING_STUCK_JOBS_SECONDS", _stuck_jobs),
    Chore("idempotency keys", "CATALOG_HOUSEKEEPING_IDEMPOTENCY_SECONDS", _idempotency),
    Chore("relocations cleanup", "CATALOG_HOUSEKEEPING_RELOCATIONS_CLEANUP_SECONDS", _relocations),
    Chore("notifications", "CATALOG_HOUSEKEEPING_NOTIFICATIONS_SECONDS", _notifications),
)


class Housekeeping:
    """When each chore last ran, in one worker process (``clock``: seconds, monotonic)."""

    def __init__(self, chores: Sequence[Chore] = CHORES, clock: Callable[[], float] = time.monotonic) -> None:
        self.chores = tuple(chores)
        self.clock = clock
        self.last_run: dict[str, float] = {}

    def run_due(self) -> list[str]:
        """Run every chore whose interval has passed (each one's failure logged, never raised); what they did."""
        lines: list[str] = []
        for chore in self.chores:
            now = self.clock()
            last = self.last_run.get(chore.name)
            if last is not None and now - last < getattr(settings, chore.interval):
                continue
            self.last_run[chore.name] = now
            lines += self._run(chore)
        return lines

    @staticmethod
    def _run(chore: Chore) -> list[str]:
        try:
            with held_alone(f"catalog-admin:housekeeping:{chore.name}") as alone:
                if not alone:
                    logger.info("Housekeeping: %s skipped: another worker is running it", chore.name)
                    return []
                lines = chore.run()
        except Exception as exc:  # one chore's failure must not stop the worker or the other chores
            logger.exception("Housekeeping: %s failed", chore.name)
            return [f"Housekeeping: {chore.name} failed: {first_line(exc)}"]
        logger.info("Housekeeping: %s ran: %s", chore.name, "; ".join(lines) or "nothing to do")
        return lines


@contextmanager
def held_alone(name: str) -> Iterator[bool]:
    """Whether this worker took the lock ``name`` on the console's database (PostgreSQL's session advisory locks,
    MySQL's ``GET_LOCK``), without waiting; released on leaving. On SQLite (one machine: the demo) always True."""
    connection = connections[DEFAULT_DB_ALIAS]
    if connection.vendor == "postgresql":
        take, release = "SELECT pg_try_advisory_lock(hashtext(%s))", "SELECT pg_advisory_unlock(hashtext(%s))"
    elif connection.vendor == "mysql":
        take, release = "SELECT GET_LOCK(%s, 0)", "SELECT RELEASE_LOCK(%s)"
    else:
        yield True
        return
    with connection.cursor() as cursor:
        cursor.execute(take, [name])
        taken = bool(cursor.fetchone()[0])
    try:
        yield taken
    finally:
        if taken:
            with connection.cursor() as cursor:
                cursor.execute(release, [name])
