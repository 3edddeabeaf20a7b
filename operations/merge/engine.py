"""
Where a merge's copy units run: ``local`` (the worker's own process: PostgreSQL to PostgreSQL a ``COPY`` pipe, else
batched reads and writes) or the configured Spark engine (``CATALOG_SPARK_MASTER``: the program as a Spark job, JDBC
reads in key ranges and executors writing). ``CATALOG_MERGE_ENGINE`` chooses: ``auto`` (the default: Spark when
``CATALOG_SPARK_MASTER`` names a cluster or a Spark Connect server, ``local`` for the embedded ``local[*]``, which
would only add a JVM to the same machine), ``spark`` or ``local``. The publish always runs in the worker, on its own
connection to the target (one transaction with the notification events).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings

from catalog_admin.errors import ApplicationError, ErrorCode

__all__ = ("CHOICES", "LOCAL", "Elsewhere", "merge_engine", "runs_on_spark")

# Runs one of the merge's programs on the engine (a Spark driver): given the program (``merge``: the rows' copy
# units; ``relocate``: the data's verified copy), its password-free plan and a function journaling the units it
# finished; returns the program's manifest.
Elsewhere = Callable[[str, dict[str, Any], Callable[[list[str]], None]], dict[str, Any]]

LOCAL = "local"
CHOICES = ("auto", "spark", LOCAL)


def runs_on_spark() -> bool:
    """Whether merges copy on the Spark engine (``CATALOG_MERGE_ENGINE``, see the module)."""
    choice = str(getattr(settings, "CATALOG_MERGE_ENGINE", "auto") or "auto").lower()
    if choice not in CHOICES:
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            f"CATALOG_MERGE_ENGINE: {choice!r} is not one of {', '.join(CHOICES)}.",
            {"field": "CATALOG_MERGE_ENGINE"},
        )
    if choice == "auto":
        return not str(settings.CATALOG_SPARK_MASTER).startswith("local")
    return choice == "spark"


def merge_engine() -> str:
    """The engine a merge runs on, as the job and the preview name it: ``local`` or the Spark master."""
    return str(settings.CATALOG_SPARK_MASTER) if runs_on_spark() else LOCAL
