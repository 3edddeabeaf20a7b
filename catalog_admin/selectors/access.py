"""
Who can read a table or database, and why; and what one principal can read, with the path (issue 28).

A few set-based queries, whatever the number of grants: the object's grants (TBL_PRIVS / DB_PRIVS, SELECT or ALL),
every role membership (ROLE_MAP joined with ROLES, once) expanded in memory to the users and groups holding a role
directly or through other roles, and the owner. As Hive's SQL-standard authorization decides (``SQLAuthorizationUtils
.getPrivilegesFromMetaStore``): a user reads a table through their own grant, a grant to a role they hold (roles
through roles, ``getAllRoleAncestors``), a grant to ``public`` (every user), ownership of the table, or the ``admin``
role; a database grant gives no table access under SQL-standard authorization (it does under Hive's legacy
authorization, so such grants are listed apart). Group grants are listed as stored: whether a user's groups count
depends on the authorization in force. On a metastore governed by Apache Ranger
(``METASTORE_AUTHORIZATION_<NAME>=ranger``) these grants are not what is enforced, and the report says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import connections

from catalog_admin.selectors.metastores import Metastore

__all__ = ("AccessPath", "AccessReport", "PrincipalAccess", "ReadableObject", "principal_access", "who_can_read")

READ_PRIVILEGES = ("SELECT", "ALL")
LIMIT = 1000  # objects listed for one principal; the report says when there are more


@dataclass(frozen=True)
class AccessPath:
    """One principal able to read, and why: ``via`` is ``grant`` (their own), ``role`` (``roles``: the chain from the
    principal's role to the granted one), ``public``, ``owner``, ``admin`` or ``database`` (a database grant)."""

    principal_type: str
    principal_name: str
    via: str
    privilege: str = ""
    grantor: str = ""
    grant_option: bool = False
    roles: tuple[str, ...] = ()

    @property
    def why(self) -> str:
        if self.via == "role":
            return f"holds role {' → '.join(self.roles)}, granted {self.privilege} by {self.grantor}"
        return {
            "grant": f"granted {self.privilege} by {self.grantor}"
            + (" WITH GRANT OPTION" if self.grant_option else ""),
            "public": f"everyone: {self.privilege} granted to role public by {self.grantor}",
            "owner": "owns it",
            "admin": "holds role admin",
            "database": f"granted {self.privilege} on the database by {self.grantor} (legacy authorization only)",
        }.get(self.via, self.via)

    def as_dict(self) -> dict[str, Any]:
        return {
            "principal_type": self.principal_type,
            "principal_name": self.principal_name,
            "via": self.via,
            "privilege": self.privilege,
            "grantor": self.grantor,
            "grant_option": self.grant_option,
            "roles": list(self.roles),
            "why": self.why,
        }


@dataclass(frozen=True)
class AccessReport:
    """Who can read one table or database on a metastore, and whether HMS grants are what is enforced there."""

    metastore: str
    database: str
    table: str
    authorization: str
    exists: bool
    paths: tuple[AccessPath, ...] = ()

    @property
    def enforced(self) -> bool:
        return self.authorization != "ranger"

    def as_dict(self) -> dict[str, Any]:
        return {
            "metastore": self.metastore,
            "database": self.database,
            "table": self.table,
            "authorization": self.authorization,
            "enforced": self.enforced,
            "exists": self.exists,
            "paths": [p.as_dict() for p in self.paths],
        }


@dataclass(frozen=True)
class ReadableObject:
    """One table or database a principal can read, and the path."""

    database: str
    table: str
    path: AccessPath

    def as_dict(self) -> dict[str, Any]:
        return {"database": self.database, "table": self.table, **self.path.as_dict()}


@dataclass(frozen=True)
class PrincipalAccess:
    """What one principal can read: its roles (transitively, with the chain) and the objects."""

    metastore: str
    principal_type: str
    principal_name: str
    authorization: str
    roles: dict[str, tuple[str, ...]] = field(default_factory=dict)
    objects: tuple[ReadableObject, ...] = ()
    truncated: bool = False

    @property
    def enforced(self) -> bool:
        return self.authorization != "ranger"

    def as_dict(self) -> dict[str, Any]:
        return {
            "metastore": self.metastore,
            "principal_type": self.principal_type,
            "principal_name": self.principal_name,
            "authorization": self.authorization,
            "enforced": self.enforced,
            "roles": {r: list(c) for r, c in self.roles.items()},
            "objects": [o.as_dict() for o in self.objects],
            "truncated": self.truncated,
        }


class _Sql:
    def __init__(self, metastore: Metastore) -> None:
        self.metastore = metastore
        self.connection = connections[metastore.alias]

    def q(self, name: str) -> str:
        return str(self.connection.ops.quote_name(name))

    def rows(self, sql: str, params: Iterable[Any]) -> list[tuple[Any, ...]]:
        with self.connection.cursor() as cursor:
            cursor.execute(sql, list(params))
            return list(cursor.fetchall())

    def catalog(self, alias: str) -> tuple[str, list[Any]]:
        if not self.metastore.schema.has_catalogs:
            return "", []
        return f" AND {alias}.{self.q('CTLG_NAME')} = %s", ["hive"]


def _memberships(sql: _Sql) -> list[tuple[str, str, str]]:
    """Every ROLE_MAP row as (principal type, principal name, role name), in one query."""
    q = sql.q
    return [
        (str(t), str(n), str(r))
        for t, n, r in sql.rows(
            f"SELECT m.{q('PRINCIPAL_TYPE')}, m.{q('PRINCIPAL_NAME')}, r.{q('ROLE_NAME')} FROM {q('ROLE_MAP')} m "
            f"JOIN {q('ROLES')} r ON r.{q('ROLE_ID')} = m.{q('ROLE_ID')}",
            [],
        )
    ]


def _holders(memberships: list[tuple[str, str, str]], role: str) -> dict[tuple[str, str], tuple[str, ...]]:
    """Every user and group holding ``role``, directly or through roles, with the chain of roles (theirs first)."""
    members: dict[str, list[tuple[str, str]]] = {}
    for kind, name, parent in memberships:
        members.setdefault(parent, []).append((kind, name))
    found: dict[tuple[str, str], tuple[str, ...]] = {}
    queue: list[tuple[str, tuple[str, ...]]] = [(role, (role,))]
    seen = {role}
    while queue:
        current, chain = queue.pop(0)
        for kind, name in sorted(members.get(current, ())):
            if kind == "ROLE":
                if name not in seen:
                    seen.add(name)
                    queue.append((name, (name, *chain)))
            elif (kind, name) not in found:
                found[(kind, name)] = chain
    return found


def _role_chains(memberships: list[tuple[str, str, str]], kind: str, name: str) -> dict[str, tuple[str, ...]]:
    """Every role ``kind name`` holds, directly or through roles, with the chain from its own role to that one."""
    parents: dict[tuple[str, str], list[str]] = {}
    for member_kind, member, role in memberships:
        parents.setdefault((member_kind, member), []).append(role)
    chains: dict[str, tuple[str, ...]] = {}
    queue: list[tuple[str, tuple[str, ...]]] = [(role, (role,)) for role in sorted(parents.get((kind, name), ()))]
    while queue:
        role, chain = queue.pop(0)
        if role in chains:
            continue
        chains[role] = chain
        queue += [(parent, (*chain, parent)) for parent in sorted(parents.get(("ROLE", role), ()))]
    return chains


def who_can_read(metastore: Metastore, database: str, table: str = "") -> AccessReport:
    """Every principal able to read ``database``.``table`` (or the database), each with its path."""
    sql, q = _Sql(metastore), _Sql(metastore).q
    catalog, catalog_params = sql.catalog("d")
    found = sql.rows(
        f"SELECT d.{q('DB_ID')}, d.{q('OWNER_NAME')}, d.{q('OWNER_TYPE')} FROM {q('DBS')} d "
        f"WHERE d.{q('NAME')} = %s{catalog}",
        [database, *catalog_params],
    )
    report = AccessReport(metastore.name, database, table, metastore.config.authorization, exists=bool(found))
    if not found:
        return report
    db_id, owner, owner_type = found[0]
    grants: list[tuple[str, str, str, str, bool, str]] = []  # (scope, type, name, privilege, option, grantor)
    marks = ", ".join(["%s"] * len(READ_PRIVILEGES))
    if table:
        tables = sql.rows(
            f"SELECT {q('TBL_ID')}, {q('OWNER')} FROM {q('TBLS')} WHERE {q('DB_ID')} = %s AND {q('TBL_NAME')} = %s",
            [db_id, table],
        )
        if not tables:
            return AccessReport(metastore.name, database, table, metastore.config.authorization, exists=False)
        tbl_id, owner = tables[0]
        owner_type = "USER"
        grants += [
            ("table", *row)
            for row in sql.rows(
                f"SELECT {q('PRINCIPAL_TYPE')}, {q('PRINCIPAL_NAME')}, {q('TBL_PRIV')}, {q('GRANT_OPTION')}, "
                f"{q('GRANTOR')} FROM {q('TBL_PRIVS')} WHERE {q('TBL_ID')} = %s AND {q('TBL_PRIV')} IN ({marks})",
                [tbl_id, *READ_PRIVILEGES],
            )
        ]
    grants += [
        ("database", *row)
        for row in sql.rows(
            f"SELECT {q('PRINCIPAL_TYPE')}, {q('PRINCIPAL_NAME')}, {q('DB_PRIV')}, {q('GRANT_OPTION')}, {q('GRANTOR')} "
            f"FROM {q('DB_PRIVS')} WHERE {q('DB_ID')} = %s AND {q('DB_PRIV')} IN ({marks})",
            [db_id, *READ_PRIVILEGES],
        )
    ]
    memberships = _memberships(sql)
    paths = _paths(grants, memberships, table_level=bool(table))
    if owner:
        paths.append(AccessPath(str(owner_type or "USER"), str(owner), "owner"))
    paths += [
        AccessPath(kind, name, "admin", roles=chain) for (kind, name), chain in _holders(memberships, "admin").items()
    ]
    order = {"grant": 0, "role": 1, "public": 2, "owner": 3, "admin": 4, "database": 5}
    paths.sort(key=lambda p: (order[p.via], p.principal_type, p.principal_name, p.privilege, p.roles))
    return AccessReport(metastore.name, database, table, metastore.config.authorization, True, tuple(paths))


def _paths(
    grants: list[tuple[Any, ...]], memberships: list[tuple[str, str, str]], *, table_level: bool
) -> list[AccessPath]:
    paths: list[AccessPath] = []
    for scope, kind, name, privilege, option, grantor in grants:
        indirect = table_level and scope == "database"
        if kind == "ROLE" and str(name).lower() == "public":
            paths.append(AccessPath("ROLE", "public", "database" if indirect else "public", privilege, grantor))
            continue
        paths.append(AccessPath(kind, name, "database" if indirect else "grant", privilege, grantor, bool(option)))
        if kind == "ROLE":
            for (holder_kind, holder), chain in _holders(memberships, name).items():
                via = "database" if indirect else "role"
                paths.append(AccessPath(holder_kind, holder, via, privilege, grantor, bool(option), chain))
    return paths


def principal_access(
    metastore: Metastore, principal_type: str, principal_name: str, *, groups: Iterable[str] = ()
) -> PrincipalAccess:
    """What ``principal_type principal_name`` (USER, GROUP or ROLE) can read: the tables and databases granted to it,
    to a role it holds (with the chain), to ``public`` (a user's), or to ``groups`` it is named in, and what it
    owns; at most :data:`LIMIT` objects."""
    sql, q = _Sql(metastore), _Sql(metastore).q
    memberships = _memberships(sql)
    roles = _role_chains(memberships, principal_type, principal_name)
    for group in groups:
        roles.update(
            {r: (f"group {group}", *c) for r, c in _role_chains(memberships, "GROUP", group).items() if r not in roles}
        )
    if principal_type == "ROLE":
        roles = {principal_name: (principal_name,), **roles}
    holders = [(principal_type, principal_name)] if principal_type != "ROLE" else []
    holders += [("GROUP", g) for g in groups] + [("ROLE", r) for r in roles]
    if principal_type == "USER":
        holders.append(("ROLE", "public"))
    pairs = " OR ".join(f"(p.{q('PRINCIPAL_TYPE')} = %s AND p.{q('PRINCIPAL_NAME')} = %s)" for _ in holders)
    params = [v for pair in holders for v in pair]
    marks = ", ".join(["%s"] * len(READ_PRIVILEGES))
    catalog, catalog_params = sql.catalog("d")
    rows = sql.rows(
        f"SELECT d.{q('NAME')}, t.{q('TBL_NAME')}, p.{q('PRINCIPAL_TYPE')}, p.{q('PRINCIPAL_NAME')}, "
        f"p.{q('TBL_PRIV')}, p.{q('GRANT_OPTION')}, p.{q('GRANTOR')} FROM {q('TBL_PRIVS')} p "
        f"JOIN {q('TBLS')} t ON t.{q('TBL_ID')} = p.{q('TBL_ID')} JOIN {q('DBS')} d ON d.{q('DB_ID')} = t.{q('DB_ID')} "
        f"WHERE ({pairs}) AND p.{q('TBL_PRIV')} IN ({marks}){catalog} "
        f"UNION ALL SELECT d.{q('NAME')}, '', p.{q('PRINCIPAL_TYPE')}, p.{q('PRINCIPAL_NAME')}, p.{q('DB_PRIV')}, "
        f"p.{q('GRANT_OPTION')}, p.{q('GRANTOR')} FROM {q('DB_PRIVS')} p JOIN {q('DBS')} d "
        f"ON d.{q('DB_ID')} = p.{q('DB_ID')} WHERE ({pairs}) AND p.{q('DB_PRIV')} IN ({marks}){catalog} "
        f"ORDER BY 1, 2 LIMIT {LIMIT + 1}",
        [*params, *READ_PRIVILEGES, *catalog_params, *params, *READ_PRIVILEGES, *catalog_params],
    )
    if principal_type == "USER":
        rows += [
            (d, t, "USER", principal_name, "", 0, "")
            for d, t in sql.rows(
                f"SELECT d.{q('NAME')}, t.{q('TBL_NAME')} FROM {q('TBLS')} t JOIN {q('DBS')} d "
                f"ON d.{q('DB_ID')} = t.{q('DB_ID')} WHERE t.{q('OWNER')} = %s{catalog} "
                f"ORDER BY 1, 2 LIMIT {LIMIT + 1}",
                [principal_name, *catalog_params],
            )
        ]
    objects = [
        ReadableObject(str(d), str(t or ""), _path_of(row, principal_type, principal_name, roles))
        for row in rows
        for d, t in [row[:2]]
    ]
    objects.sort(key=lambda o: (o.database, o.table, o.path.via))
    return PrincipalAccess(
        metastore.name,
        principal_type,
        principal_name,
        metastore.config.authorization,
        roles,
        tuple(objects[:LIMIT]),
        truncated=len(objects) > LIMIT,
    )


def _path_of(
    row: tuple[Any, ...], principal_type: str, principal_name: str, roles: dict[str, tuple[str, ...]]
) -> AccessPath:
    _database, table, kind, name, privilege, option, grantor = row
    if not privilege:
        return AccessPath(principal_type, principal_name, "owner")
    if kind == "ROLE" and name == "public":
        via = "public"
    elif kind == "ROLE" and (principal_type != "ROLE" or name != principal_name):
        return AccessPath(kind, name, "role", privilege, grantor, bool(option), roles.get(name, (name,)))
    else:
        via = "grant"
    return AccessPath(kind, name, via, privilege, grantor, bool(option))
