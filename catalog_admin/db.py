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
    "check_metastore_statement",
    "install_write_guard",
    "is_read_only_sql",
)

_writes_allowed: ContextVar[bool] = ContextVar("metastore_writes_allowed", default=False)

_READ_ONLY_START = re.compile(
    r"^\s*(SELECT|WITH|SHOW|EXPLAIN|DESCRIBE|DESC|VALUES|PRAGMA|SAVEPOINT|RELEASE|ROLLBACK|BEGIN|COMMIT|SET)\b",
    re.IGNORECASE,
)
_WRITE_ANYWHERE = re.compile(
    r"\b(INSERT|UPDATE|DELETE|MERGE|TRUNCATE|DROP|ALTER|CREATE|GRANT|REVOKE|INTO)\b"  # INTO: SELECT … INTO
    r"|\bFOR\s+(KEY\s+)?(UPDATE|SHARE)\b|\bLOCK\s+IN\s+SHARE\s+MODE\b"  # row locks
    r"|\bREAD\s+WRITE\b|TRANSACTION_READ_ONLY\b",  # lifting a read-only transaction or session
    re.IGNORECASE,
)
# String literals, quoted identifiers and comments, as each dialect reads them, matched leftmost-first in one
# pass: a quote inside a comment, or a comment marker or backslash-escaped quote inside a string, then cannot
# hide the code after it. A statement is read-only only if it reads as read-only under every dialect.
_DIALECT_TOKENS = (
    # PostgreSQL: E'' strings take backslash escapes, others double quotes; $tag$ quoting; -- and /* */.
    # (A backtick outside a string is a syntax error there, so skipping `…` cannot hide anything PostgreSQL runs.)
    re.compile(
        r"(?<![\w$])[Ee]'(?:[^'\\]|''|\\.)*'|'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|`(?:[^`]|``)*`"
        r"|--[^\n]*|/\*.*?\*/|(?<![\w$])\$((?:[A-Za-z_]\w*)?)\$.*?\$\1\$",
        re.DOTALL,
    ),
    # MySQL / MariaDB: backslash escapes; `identifiers`; # comments; "-- " needs a space; /*! … */ is executed.
    re.compile(
        r"'(?:[^'\\]|''|\\.)*'|\"(?:[^\"\\]|\"\"|\\.)*\"|`(?:[^`]|``)*`|#[^\n]*|--(?=\s|$)[^\n]*|/\*(?!M?!).*?\*/",
        re.DOTALL,
    ),
    # SQLite: standard strings; "…", `…` and […] identifiers; -- and /* */.
    re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|`(?:[^`]|``)*`|\[[^\]]*\]|--[^\n]*|/\*.*?\*/", re.DOTALL),
)
# A run of placeholders (``IN (%s, %s, …)`` of 5,000 ids) reads as one: the run holds no quote, comment marker or
# keyword, the characters on either side of it stay as they were, and no line break is taken out (a ``--`` or ``#``
# comment ends at one), so every dialect tokenizes the rest exactly as before, without scanning the run.
_PLACEHOLDER_RUN = re.compile(r"%s(?:[ \t]*,[ \t]*%s)+")


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
    """Whether ``sql`` only reads: each statement starts with a read-only keyword, no write keyword outside quotes."""
    sql = _PLACEHOLDER_RUN.sub("%s", sql)
    return all(_reads_only(tokens.sub(" ", sql)) for tokens in _DIALECT_TOKENS)


def _reads_only(bare: str) -> bool:
    """``bare`` is SQL without literals and comments; psycopg2 runs every ``;``-separated statement in it."""
    statements = [part for part in bare.split(";") if part.strip()]
    return bool(statements) and all(
        _READ_ONLY_START.match(part) and not _WRITE_ANYWHERE.search(part) for part in statements
    )


def check_metastore_statement(alias: str, sql: str) -> None:
    """The guard's rule for one statement to metastore ``alias``: one that could write is refused
    (``MetastoreWriteForbidden``, naming the metastore and the statement) outside :func:`allow_metastore_writes`.
    Django's connections apply it to every statement; a program's own DB-API connection to a metastore (the merge's)
    calls it before each."""
    if not _writes_allowed.get() and not is_read_only_sql(sql):
        raise MetastoreWriteForbidden(
            f"Refused to write to metastore '{alias}' outside the service layer: {(sql.split() or ['?'])[0].upper()} …"
        )


def _forbid_writes(execute: Callable, sql: str, params: Any, many: bool, context: dict) -> Any:
    check_metastore_statement(context["connection"].alias, sql)
    return execute(sql, params, many, context)


def install_write_guard(sender: Any, connection: BaseDatabaseWrapper, **kwargs: Any) -> None:
    """``connection_created`` receiver: guard every metastore connection once."""
    aliases = {config.alias for config in settings.METASTORE_CONFIGS}
    if connection.alias in aliases and _forbid_writes not in connection.execute_wrappers:
        connection.execute_wrappers.append(_forbid_writes)
