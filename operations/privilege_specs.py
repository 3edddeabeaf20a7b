"""
The spec of an access-control statement (issue 28): GRANT/REVOKE of privileges on a database or table, CREATE/DROP
ROLE, and GRANT/REVOKE of roles — what ``operations.ddl.privileges`` parses and the privilege planner plans.

A request stores ``operation = spec.as_dict()`` (kind ``privilege``); its revert stores
``{"kind": "privilege_revert", "execution": id}``. The privilege names are SQL-standard authorization's
(``SQLStdHiveAccessController.SUPPORTED_PRIVS``: SELECT, INSERT, UPDATE, DELETE and ALL; ALL is expanded to the four
on write, ``expandAllPrivileges``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = (
    "ACTIONS",
    "PRINCIPAL_TYPES",
    "PRIVILEGE_KIND",
    "PRIVILEGE_REVERT_KIND",
    "SQL_PRIVILEGES",
    "Principal",
    "PrivilegeSpec",
    "expand_privileges",
    "quoted",
)

PRIVILEGE_KIND = "privilege"
PRIVILEGE_REVERT_KIND = "privilege_revert"
ACTIONS = ("grant", "revoke", "create_role", "drop_role", "grant_role", "revoke_role")
PRINCIPAL_TYPES = ("USER", "GROUP", "ROLE")
# SQLPrivilegeType.values(), the order ALL expands to (SQLStdHiveAccessController.expandAllPrivileges).
SQL_PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE")


def quoted(name: str) -> str:
    """``name`` as an identifier in a statement: backquoted unless a plain word."""
    return name if re.fullmatch(r"[A-Za-z0-9_$]+", name) else "`" + name.replace("`", "``") + "`"


def expand_privileges(names: tuple[str, ...]) -> tuple[str, ...]:
    """``names`` with ALL replaced by the four SQL privileges, each once, in SQLPrivilegeType's order."""
    wanted = set(SQL_PRIVILEGES) if "ALL" in names else set(names)
    return tuple(p for p in SQL_PRIVILEGES if p in wanted)


@dataclass(frozen=True, order=True)
class Principal:
    """Who a grant is for: PRINCIPAL_TYPE and PRINCIPAL_NAME as Hive stores them (a role's name in lower case)."""

    type: str
    name: str

    def __str__(self) -> str:
        return f"{self.type} {quoted(self.name)}"


@dataclass(frozen=True)
class PrivilegeSpec:
    """One access-control statement. ``table`` empty: ``ON DATABASE``; ``option``: WITH GRANT/ADMIN OPTION on a grant,
    GRANT/ADMIN OPTION FOR on a revoke."""

    kind: ClassVar[str] = PRIVILEGE_KIND

    action: str
    privileges: tuple[str, ...] = ()
    database: str = ""
    table: str = ""
    principals: tuple[Principal, ...] = ()
    roles: tuple[str, ...] = ()
    option: bool = False
    columns: tuple[str, ...] = ()

    @property
    def on_object(self) -> bool:
        """A privilege statement (on a database or table), not a role statement."""
        return self.action in ("grant", "revoke")

    @property
    def object_label(self) -> str:
        if not self.on_object:
            return ""
        return f"TABLE {self.database}.{self.table}" if self.table else f"DATABASE {self.database}"

    @property
    def statement(self) -> str:
        """The statement in Hive's syntax, canonical (what requests, executions and the audit show)."""
        whom = ", ".join(str(p) for p in self.principals)
        if self.action in ("create_role", "drop_role"):
            return f"{'CREATE' if self.action == 'create_role' else 'DROP'} ROLE {quoted(self.roles[0])}"
        if self.action in ("grant_role", "revoke_role"):
            roles = ", ".join(quoted(r) for r in self.roles)
            if self.action == "grant_role":
                return f"GRANT ROLE {roles} TO {whom}" + (" WITH ADMIN OPTION" if self.option else "")
            return f"REVOKE {'ADMIN OPTION FOR ' if self.option else ''}ROLE {roles} FROM {whom}"
        columns = f" ({', '.join(self.columns)})" if self.columns else ""
        privileges = ", ".join(p + columns for p in self.privileges)
        if self.action == "grant":
            tail = " WITH GRANT OPTION" if self.option else ""
            return f"GRANT {privileges} ON {self.object_label} TO {whom}{tail}"
        return f"REVOKE {'GRANT OPTION FOR ' if self.option else ''}{privileges} ON {self.object_label} FROM {whom}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": PRIVILEGE_KIND,
            "action": self.action,
            "privileges": list(self.privileges),
            "database": self.database,
            "table": self.table,
            "principals": [[p.type, p.name] for p in self.principals],
            "roles": list(self.roles),
            "option": self.option,
            "columns": list(self.columns),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PrivilegeSpec:
        """The spec of :meth:`as_dict`'s output (``KeyError``/``TypeError``/``ValueError`` on another shape)."""
        if data.get("kind") != PRIVILEGE_KIND or data.get("action") not in ACTIONS:
            raise ValueError(f"not a privilege operation: {data.get('kind')!r} {data.get('action')!r}")
        return cls(
            action=str(data["action"]),
            privileges=tuple(str(p) for p in data.get("privileges") or ()),
            database=str(data.get("database") or ""),
            table=str(data.get("table") or ""),
            principals=tuple(Principal(str(t), str(n)) for t, n in data.get("principals") or ()),
            roles=tuple(str(r) for r in data.get("roles") or ()),
            option=bool(data.get("option")),
            columns=tuple(str(c) for c in data.get("columns") or ()),
        )
