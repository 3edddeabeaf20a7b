"""Health of the console: its own database and every registered metastore, each asked one ``SELECT 1``."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections

from catalog_admin.utils.text import first_line

__all__ = ("HealthCheck", "HealthReport", "check_database", "check_health", "health_targets")


@dataclass(frozen=True)
class HealthCheck:
    """One database's answer: ``ok``, or the first line of the error it gave."""

    name: str
    kind: str  # "console" or "metastore"
    ok: bool
    error: str = ""


@dataclass(frozen=True)
class HealthReport:
    checks: tuple[HealthCheck, ...]

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks)

    @property
    def failing(self) -> tuple[str, ...]:
        return tuple(check.name for check in self.checks if not check.ok)


def check_health() -> HealthReport:
    """Ask the console's database and each metastore (in ``METASTORE_CONFIGS`` order) to answer a query."""
    return HealthReport(tuple(check_database(*target) for target in health_targets()))


def health_targets() -> list[tuple[str, str, str]]:
    """``(name, kind, alias)`` of the console's database and each metastore, in ``METASTORE_CONFIGS`` order."""
    targets = [("console", "console", DEFAULT_DB_ALIAS)]
    return targets + [(config.name, "metastore", config.alias) for config in settings.METASTORE_CONFIGS]


def check_database(name: str, kind: str, alias: str) -> HealthCheck:
    """One ``SELECT 1`` on ``alias``; an error is the check's answer, never raised."""
    try:
        with connections[alias].cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as exc:
        connections[alias].close_if_unusable_or_obsolete()
        return HealthCheck(name, kind, ok=False, error=first_line(exc))
    return HealthCheck(name, kind, ok=True)
