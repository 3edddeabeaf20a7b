"""
Structured database statements (issue 27): ``CREATE DATABASE``, ``ALTER DATABASE`` and ``DROP DATABASE``.

Each spec is a frozen dataclass naming its database; ``to_ddl()`` renders the normalized Hive statement a preview shows
(``DDLSemanticAnalyzer`` 2.3 / ``CreateDatabaseAnalyzer`` and friends 3.1-4.0 read it back). They extend
:class:`operations.specs.AlterSpec` only so that the request form, the API and ``hive_ddl`` carry them where they carry
an ALTER: ``target`` is ``TableRef(database, "")``, and the ``database`` change kind (``services/database_kind.py``),
never the ALTER planners, plans them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from operations.ddl.render import quote_ident, quote_string, render_properties
from operations.specs import AlterSpec, TableRef

__all__ = (
    "ALTER_DATABASE_ACTIONS",
    "DATABASE_SPEC_KINDS",
    "AlterDatabase",
    "CreateDatabase",
    "DatabaseSpec",
    "DropDatabase",
    "RevertDatabase",
    "database_spec_from_dict",
)

# ALTER DATABASE's clauses (alterDatabaseStatementSuffix): what each changes.
ALTER_DATABASE_ACTIONS = ("set_properties", "set_owner", "set_location", "set_managed_location")


@dataclass(frozen=True)
class DatabaseSpec(AlterSpec):
    """A statement about one database (``name``, lower-cased as the metastore stores it)."""

    target: TableRef = field(init=False)
    name: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "target", TableRef(self.name, ""))

    def to_ddl(self) -> str:
        raise NotImplementedError

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "name": self.name}
        for name in self.__dataclass_fields__:
            if name not in ("target", "on_view", "name"):
                value = getattr(self, name)
                data[name] = [list(pair) for pair in value] if name == "properties" else value
        return data


@dataclass(frozen=True)
class CreateDatabase(DatabaseSpec):
    """``CREATE DATABASE|SCHEMA [IF NOT EXISTS] d [COMMENT '…'] [LOCATION '…'] [MANAGEDLOCATION '…'] [WITH DBPROPERTIES
    (…)]``."""

    kind: ClassVar[str] = "create_database"
    if_not_exists: bool = False
    comment: str | None = None
    location: str | None = None
    managed_location: str | None = None
    properties: tuple[tuple[str, str], ...] = ()

    def to_ddl(self) -> str:
        text = "CREATE DATABASE " + ("IF NOT EXISTS " if self.if_not_exists else "") + quote_ident(self.name)
        if self.comment is not None:
            text += f" COMMENT {quote_string(self.comment)}"
        if self.location is not None:
            text += f" LOCATION {quote_string(self.location)}"
        if self.managed_location is not None:
            text += f" MANAGEDLOCATION {quote_string(self.managed_location)}"
        if self.properties:
            text += f" WITH DBPROPERTIES {render_properties(self.properties)}"
        return text


@dataclass(frozen=True)
class AlterDatabase(DatabaseSpec):
    """``ALTER DATABASE|SCHEMA d SET DBPROPERTIES (…) | SET OWNER USER|ROLE x | SET LOCATION '…' | SET MANAGEDLOCATION
    '…'`` (``action``, one of :data:`ALTER_DATABASE_ACTIONS`)."""

    kind: ClassVar[str] = "alter_database"
    action: str = "set_properties"
    properties: tuple[tuple[str, str], ...] = ()
    principal_type: str = ""  # USER | ROLE
    principal: str = ""
    location: str = ""

    def to_ddl(self) -> str:
        head = f"ALTER DATABASE {quote_ident(self.name)} "
        if self.action == "set_properties":
            return head + f"SET DBPROPERTIES {render_properties(self.properties)}"
        if self.action == "set_owner":
            return head + f"SET OWNER {self.principal_type} {quote_ident(self.principal)}"
        word = "MANAGEDLOCATION" if self.action == "set_managed_location" else "LOCATION"
        return head + f"SET {word} {quote_string(self.location)}"


@dataclass(frozen=True)
class DropDatabase(DatabaseSpec):
    """``DROP DATABASE|SCHEMA [IF EXISTS] d [RESTRICT|CASCADE]`` (``cascade``: CASCADE was written)."""

    kind: ClassVar[str] = "drop_database"
    if_exists: bool = False
    cascade: bool = False

    def to_ddl(self) -> str:
        exists = "IF EXISTS " if self.if_exists else ""
        return f"DROP DATABASE {exists}{quote_ident(self.name)} {'CASCADE' if self.cascade else 'RESTRICT'}"


@dataclass(frozen=True)
class RevertDatabase(DatabaseSpec):
    """The revert of a database execution (``execution``: its id); requested from the executed request only."""

    kind: ClassVar[str] = "revert_database"
    execution: int = 0

    def to_ddl(self) -> str:
        return f"-- Revert execution #{self.execution} (database {quote_ident(self.name)})"


DATABASE_SPEC_KINDS: dict[str, type[DatabaseSpec]] = {
    cls.kind: cls for cls in (CreateDatabase, AlterDatabase, DropDatabase, RevertDatabase)
}


def database_spec_from_dict(data: dict[str, Any]) -> DatabaseSpec:
    """Rebuild a spec from :meth:`DatabaseSpec.as_dict` (or an API payload of the same shape); a ``ValueError``
    naming the problem otherwise."""
    cls = DATABASE_SPEC_KINDS.get(data.get("kind", ""))
    if cls is None:
        raise ValueError(f"no database statement of kind {data.get('kind')!r}")
    fields = {k: v for k, v in data.items() if k != "kind"}
    unknown = sorted(set(fields) - set(cls.__dataclass_fields__) | ({"target", "on_view"} & set(fields)))
    if unknown:
        raise ValueError(f"{cls.kind} has no field(s) {', '.join(unknown)}")
    if not isinstance(fields.get("name"), str) or not fields["name"].strip():
        raise ValueError("name the database")
    if "properties" in fields:
        pairs = fields["properties"]
        if isinstance(pairs, dict):
            pairs = list(pairs.items())
        fields["properties"] = tuple((str(k), str(v)) for k, v in pairs)
    if cls is AlterDatabase and fields.get("action", "set_properties") not in ALTER_DATABASE_ACTIONS:
        raise ValueError(f"action is one of {', '.join(ALTER_DATABASE_ACTIONS)}")
    return cls(**fields)
