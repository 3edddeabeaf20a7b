"""
The write guard on metastore connections.

Every metastore connection gets an execute wrapper that refuses statements which could change
data (INSERT, UPDATE, DELETE, DDL, row locks …). Only code running inside
:func:`allow_metastore_writes` — the execute services of ``operations`` and the seeding command —
may write. Browsing can therefore never modify a governed metastore, whatever a view does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.conf import settings
from django.db.backends.base.base import BaseDatabaseWrapper

__all__ = (
    "MetastoreWriteForbidden",
    "allow_metastore_writes",
    "install_write_guard",
    "is_read_only_sql",
)

_writes_allowed: ContextVar[bool] = ContextVar("metastore_writes_allowed", default=False)

_READ_ONLY_START = re.compile(
    r"^\s*(SELECT|WITH|SHOW|EXPLAIN|DESCRIBE|DESC|VALUES|PRAGMA|SAVEPOINT|RELEASE|ROLLBACK|BEGIN|COMMIT|SET)\b",
    re.IGNORECASE,
)
_WRITE_ANYWHERE = re.compile(
    r"\b(INSERT|UPDATE|DELETE|MERGE|TRUNCATE|DROP|ALTER|CREATE|GRANT|REVOKE)\b|\bFOR\s+(UPDATE|SHARE)\b",
    re.IGNORECASE,
)
_STRING_LITERALS = re.compile(r"'(?:[^']|'')*'")
_QUOTED_IDENTIFIERS = re.compile(r'"[^"]*"|`[^`]*`')


class MetastoreWriteForbidden(Exception):
    """A statement that could change a metastore ran outside the service layer."""


@contextmanager
def allow_metastore_writes() -> Iterator[None]:
    """Permit writes to metastores for the duration of the block (nestable)."""
    token = _writes_allowed.set(True)
    try:
        yield
    finally:
        _writes_allowed.reset(token)


def is_read_only_sql(sql: str) -> bool:
    """Whether ``sql`` only reads: a read-only leading keyword and no write keyword outside quotes."""
    if not _READ_ONLY_START.match(sql):
        return False
    bare = _QUOTED_IDENTIFIERS.sub('""', _STRING_LITERALS.sub("''", sql))
    keyword = _READ_ONLY_START.match(bare).group(1).upper()  # type: ignore[union-attr]
    if keyword in {"SAVEPOINT", "RELEASE", "ROLLBACK", "BEGIN", "COMMIT", "SET"}:
        return not re.search(r"\bTRANSACTION\s+READ\s+WRITE\b", bare, re.IGNORECASE)
    return not _WRITE_ANYWHERE.search(bare)


def _forbid_writes(execute: Callable, sql: str, params: Any, many: bool, context: dict) -> Any:
    if not _writes_allowed.get() and not is_read_only_sql(sql):
        alias = context["connection"].alias
        raise MetastoreWriteForbidden(
            f"Refused to write to metastore '{alias}' outside the service layer: {sql.split()[0].upper()} …"
        )
    return execute(sql, params, many, context)


def install_write_guard(sender: Any, connection: BaseDatabaseWrapper, **kwargs: Any) -> None:
    """``connection_created`` receiver: guard every metastore connection once."""
    aliases = {config.alias for config in settings.METASTORE_CONFIGS}
    if connection.alias in aliases and _forbid_writes not in connection.execute_wrappers:
        connection.execute_wrappers.append(_forbid_writes)
