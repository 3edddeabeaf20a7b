"""
The database statements of Hive's grammar (``HiveParser.g``: ``createDatabaseStatement``, ``dropDatabaseStatement``,
``alterDatabaseStatementSuffix``), 2.3 to 4.0, read from the ALTER parser's tokens (``operations/ddl/parser.py`` hands
a statement starting ``CREATE|DROP|ALTER DATABASE|SCHEMA`` here). Clauses a version lacks (``MANAGEDLOCATION`` before
4.0) are parsed and refused by the planner, which knows the metastore's version.
"""

from __future__ import annotations

from typing import Protocol

from operations.database_specs import AlterDatabase, CreateDatabase, DatabaseSpec, DropDatabase

__all__ = ("TokenReader", "is_database_statement", "parse_database_statement")

_OBJECTS = ("DATABASE", "SCHEMA")
_VERBS = ("CREATE", "ALTER", "DROP")


class TokenReader(Protocol):
    """What this module uses of the ALTER parser (``operations.ddl.parser._Parser``)."""

    def words(self, count: int) -> tuple[str, ...]: ...
    def accept_words(self, *words: str) -> bool: ...
    def expect_words(self, *words: str) -> None: ...
    def accept_op(self, op: str) -> bool: ...
    def identifier(self) -> str: ...
    def string(self) -> str: ...
    def properties(self) -> tuple[tuple[str, str], ...]: ...
    def peek_word(self) -> str: ...
    def error(self, problem: str) -> Exception: ...
    def unsupported(self, clause: str, problem: str) -> Exception: ...


def is_database_statement(words: tuple[str, ...]) -> bool:
    """Whether a statement starting with ``words`` (upper-case) is one of the database statements."""
    return len(words) >= 2 and words[0] in _VERBS and words[1] in _OBJECTS


def parse_database_statement(reader: TokenReader) -> DatabaseSpec:
    """The spec of the database statement at the reader's position (it stops at the end of the statement)."""
    verb = reader.words(1)[0]
    reader.expect_words(verb)
    if not (reader.accept_words("DATABASE") or reader.accept_words("SCHEMA")):
        raise reader.error("expected DATABASE or SCHEMA")
    if verb == "CREATE":
        return _create(reader)
    if verb == "DROP":
        return _drop(reader)
    return _alter(reader)


def _name(reader: TokenReader) -> str:
    """The database's name as the metastore stores it: ``HMSHandler`` lower-cases it (``normalizeIdentifier``)."""
    return reader.identifier().lower()


def _create(reader: TokenReader) -> CreateDatabase:
    if_not_exists = reader.accept_words("IF", "NOT", "EXISTS")
    name = _name(reader)
    comment = reader.string() if reader.accept_words("COMMENT") else None
    location = reader.string() if reader.accept_words("LOCATION") else None
    managed = reader.string() if reader.accept_words("MANAGEDLOCATION") else None
    properties: tuple[tuple[str, str], ...] = ()
    if reader.accept_words("WITH"):
        reader.expect_words("DBPROPERTIES")
        properties = reader.properties()
    return CreateDatabase(
        name=name,
        if_not_exists=if_not_exists,
        comment=comment,
        location=location,
        managed_location=managed,
        properties=properties,
    )


def _drop(reader: TokenReader) -> DropDatabase:
    if_exists = reader.accept_words("IF", "EXISTS")
    name = _name(reader)
    cascade = reader.accept_words("CASCADE")
    if not cascade:
        reader.accept_words("RESTRICT")
    return DropDatabase(name=name, if_exists=if_exists, cascade=cascade)


def _alter(reader: TokenReader) -> AlterDatabase:
    name = _name(reader)
    reader.expect_words("SET")
    if reader.accept_words("DBPROPERTIES"):
        return AlterDatabase(name=name, action="set_properties", properties=reader.properties())
    if reader.accept_words("OWNER"):
        principal_type = reader.peek_word()
        if principal_type not in ("USER", "ROLE", "GROUP"):
            raise reader.error("expected USER, ROLE or GROUP after SET OWNER")
        reader.expect_words(principal_type)
        return AlterDatabase(
            name=name, action="set_owner", principal_type=principal_type, principal=reader.identifier()
        )
    if reader.accept_words("LOCATION"):
        return AlterDatabase(name=name, action="set_location", location=reader.string())
    if reader.accept_words("MANAGEDLOCATION"):
        return AlterDatabase(name=name, action="set_managed_location", location=reader.string())
    raise reader.error("expected DBPROPERTIES, OWNER, LOCATION or MANAGEDLOCATION after SET")
