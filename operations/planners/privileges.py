"""
Plan an access-control statement (:class:`~operations.privilege_specs.PrivilegeSpec`) as Hive's SQL-standard
authorization writes it: the rows of DB_PRIVS, TBL_PRIVS, ROLES and ROLE_MAP inserted, deleted or updated, and
Hive's refusals as blockers. A pure read: a few set-based queries, whatever the number of principals.

What is written, per version (``ObjectStore.grantPrivileges``/``revokePrivileges``/``addRole``/``removeRole``/
``grantRole``/``revokeRole``, ``HiveMetaStore.create_role``/``drop_role``/``grant_role``):

- a privilege row per (privilege, principal), ALL expanded to SELECT, INSERT, UPDATE and DELETE
  (``SQLStdHiveAccessController.expandAllPrivileges``); ``GRANTOR`` the requesting user, ``GRANTOR_TYPE`` USER,
  ``GRANT_OPTION`` 1 or 0, ``CREATE_TIME`` the metastore's clock in seconds (``(int) (currentTimeMillis() / 1000)``,
  taken when the execution runs), ``AUTHORIZER`` 'SQL' on 3.x and 4.0 (``SQLAuthorizationUtils
  .getThriftPrivilegesBag``; the column does not exist on 2.3);
- a duplicate — the privilege already granted to the principal on the object by the same grantor (and authorizer) —
  is refused: "SELECT is already granted on table [sales,orders] by alice" (``ObjectStore.grantPrivileges``);
- REVOKE deletes the principal's rows of that privilege on the object whoever granted them (``ObjectStore
  .revokePrivileges`` does not filter on the grantor); REVOKE GRANT OPTION FOR sets GRANT_OPTION to 0 and is refused
  when the principal has no grant option; a revoke of a privilege the principal does not hold is refused. Hive's
  ``RevokePrivAuthUtils`` would accept only the requesting user's own grants: in the console an approved request
  stands in for Hive's own authorization check, as for every other statement;
- CREATE ROLE: a ROLES row (``OWNER_NAME`` NULL: ``DDLTask``/``CreateRoleOperation`` pass no grantor); ``public``
  refused ("public role implicitly exists. It can't be created.", ``HiveMetaStore.create_role``), ``admin`` refused
  (``HiveMetaStore.createDefaultRoles`` creates it when the metastore starts), an existing role refused
  ("Role r already exists.", ``ObjectStore.addRole``);
- DROP ROLE: ``public`` and ``admin`` refused ("public,admin roles can't be dropped.", ``HiveMetaStore.drop_role``);
  the ROLES row, its members and its own memberships in ROLE_MAP, and every privilege granted to it (GLOBAL_PRIVS,
  DB_PRIVS, TBL_PRIVS, PART_PRIVS, TBL_COL_PRIVS, PART_COL_PRIVS, and DC_PRIVS on 4.0), as ``ObjectStore.removeRole``
  deletes them;
- GRANT ROLE: a ROLE_MAP row (``ADD_TIME`` in seconds, ``GRANT_OPTION`` 1 WITH ADMIN OPTION); ``public`` refused
  ("No user can be added to public. Since all users implictly belong to public role."), a cycle refused
  (``HiveMetaStore.isNewRoleAParent``), a principal already holding the role refused ("Principal bob already has
  the role r", ``ObjectStore.grantRole``);
- REVOKE ROLE deletes the ROLE_MAP row; REVOKE ADMIN OPTION FOR sets its GRANT_OPTION to 0 (``ObjectStore.revokeRole``).

Hive writes no notification event for any of them (``DbNotificationListener`` has no grant, revoke or role event on
2.3, 3.1 or 4.0), so the plan has none. A metastore governed by Apache Ranger
(``METASTORE_AUTHORIZATION_<NAME>=ranger``) refuses every statement: its HMS grants are not what is enforced.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from django.db import connections

from catalog_admin.models import DatabasePrivilege
from catalog_admin.selectors.metastores import Metastore
from operations.privilege_specs import PRIVILEGE_KIND, Principal, PrivilegeSpec, expand_privileges
from operations.risk import RiskCriterion, risk_of
from operations.rules import Finding
from operations.staleness import ComparedFields, KeyedField

__all__ = (
    "NOW",
    "PRIVILEGE_FIELDS",
    "PRIVILEGE_TABLES",
    "PrivilegePlan",
    "RowChange",
    "plan_privileges",
    "plan_restore",
    "read_rows",
)

NOW = "<now>"  # CREATE_TIME / ADD_TIME of a new row: the metastore's clock when the execution runs
AUTHORIZER = "SQL"
RESERVED = ("public", "admin")

# metastore table -> (id column, privilege column, object column)
PRIVILEGE_TABLES = {
    "DB_PRIVS": ("DB_GRANT_ID", "DB_PRIV", "DB_ID"),
    "TBL_PRIVS": ("TBL_GRANT_ID", "TBL_PRIV", "TBL_ID"),
}
# Every table holding a principal's privileges (removeRole deletes a role's rows from each).
GRANT_TABLES = {
    "GLOBAL_PRIVS": "USER_GRANT_ID",
    "DB_PRIVS": "DB_GRANT_ID",
    "TBL_PRIVS": "TBL_GRANT_ID",
    "PART_PRIVS": "PART_GRANT_ID",
    "TBL_COL_PRIVS": "TBL_COLUMN_GRANT_ID",
    "PART_COL_PRIVS": "PART_COLUMN_GRANT_ID",
}
# Hive 4's data connectors' privileges (DC_PRIVS): removeRole deletes a role's rows there too, where the table exists.
CONNECTOR_GRANTS = ("DC_PRIVS", "DC_GRANT_ID")
ID_COLUMNS = {**GRANT_TABLES, "ROLES": "ROLE_ID", "ROLE_MAP": "ROLE_GRANT_ID", CONNECTOR_GRANTS[0]: CONNECTOR_GRANTS[1]}

# What staleness compares of a privilege plan besides its blockers (operations.staleness.compare_plans).
PRIVILEGE_FIELDS = ComparedFields(
    scalars=(("risk", "Risk"),),
    keyed=(KeyedField("changes", "key", "action", "{}"),),
)


@dataclass(frozen=True)
class RowChange:
    """One row the statement writes: ``insert`` (``values`` without the id unless ``row_id`` is kept: a revert),
    ``delete`` (``row_id``, with the whole row in ``values``) or ``update`` (``row_id``; ``values`` the new
    columns)."""

    table: str
    action: str
    values: tuple[tuple[str, Any], ...]
    row_id: int | None = None
    label: str = ""

    @property
    def key(self) -> str:
        return f"{self.table} {self.label}" + (f" #{self.row_id}" if self.row_id is not None else "")

    def as_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "action": self.action,
            "row_id": self.row_id,
            "label": self.label,
            "key": self.key,
            "values": dict(self.values),
        }


@dataclass(frozen=True)
class PrivilegePlan:
    """The frozen plan of an access-control statement (the change kind's :class:`~operations.changes.Plan`)."""

    metastore: str
    spec: PrivilegeSpec
    grantor: str
    changes: tuple[RowChange, ...]
    blockers: tuple[Finding, ...] = ()
    warnings: tuple[Finding, ...] = ()
    reverts: int | None = None  # the execution a restore plan undoes
    reverted_statement: str = ""
    state_digest: str = ""  # the rows the plan was built from
    notes: tuple[str, ...] = field(default=())

    diff: tuple = ()

    @property
    def statement(self) -> str:
        return self.spec.statement

    @property
    def database_name(self) -> str:
        return self.spec.database

    @property
    def table_name(self) -> str:
        return self.spec.table

    @cached_property
    def fingerprint(self) -> str:
        content = {
            "metastore": self.metastore,
            "statement": self.statement,
            "grantor": self.grantor,
            "reverts": self.reverts,
            "changes": [c.as_dict() for c in self.changes],
            "blockers": sorted((b.code, b.message) for b in self.blockers),
            "state": self.state_digest,
        }
        return hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()

    @cached_property
    def criteria(self) -> tuple[RiskCriterion, ...]:
        return _criteria(self)

    @property
    def risk(self) -> str:
        return risk_of(self.criteria)

    def counts(self) -> dict[str, dict[str, int]]:
        """Rows per metastore table the plan inserts, updates and deletes."""
        counts: dict[str, dict[str, int]] = {}
        for change in self.changes:
            counts.setdefault(change.table, {"insert": 0, "update": 0, "delete": 0})[change.action] += 1
        return counts

    def as_dict(self) -> dict[str, Any]:
        """The summary a request stores (what approvers read)."""
        return {
            "kind": PRIVILEGE_KIND,
            "metastore": self.metastore,
            "statement": self.statement,
            "operation": self.spec.as_dict(),
            "grantor": self.grantor,
            "reverts": self.reverts,
            "reverted_statement": self.reverted_statement,
            "changes": [c.as_dict() for c in self.changes],
            "counts": self.counts(),
            "events": 0,
            "risk": self.risk,
            "criteria": [c.as_dict() for c in self.criteria],
            "blockers": [{"code": b.code, "rule": b.rule, "message": b.message} for b in self.blockers],
            "warnings": [{"code": w.code, "rule": w.rule, "message": w.message} for w in self.warnings],
            "notes": list(self.notes),
            "partitions_touched": 0,
        }


def _criteria(plan: PrivilegePlan) -> tuple[RiskCriterion, ...]:
    found = []
    inserted = [c for c in plan.changes if c.action == "insert"]
    removed = [c for c in plan.changes if c.action in ("delete", "update")]
    grants = [c for c in inserted if c.table in PRIVILEGE_TABLES]
    if grants:
        found.append(RiskCriterion("access_granted", f"{len(grants)} privilege row(s) granted."))
    revoked = [c for c in removed if c.table in GRANT_TABLES]
    if revoked:
        found.append(RiskCriterion("access_revoked", f"{len(revoked)} privilege row(s) revoked or narrowed."))
    roles = [c for c in plan.changes if c.table in ("ROLES", "ROLE_MAP")]
    if roles:
        found.append(RiskCriterion("roles_changed", f"{len(roles)} role or role-membership row(s) written."))
    passed_on = [c for c in inserted if dict(c.values).get("GRANT_OPTION") == 1]
    if passed_on:
        found.append(
            RiskCriterion(
                "grant_option_given",
                f"{len(passed_on)} grant(s) WITH GRANT/ADMIN OPTION: the grantee may pass them on.",
            )
        )
    return tuple(found)


# Reading --------------------------------------------------------------------------------------------------------


def _q(metastore: Metastore, name: str) -> str:
    return str(connections[metastore.alias].ops.quote_name(name))


def read_rows(metastore: Metastore, table: str, where: str, params: Sequence[Any]) -> list[dict[str, Any]]:
    """Every column of the rows of ``table`` matching ``where`` (column names quoted by the caller), sorted by id."""
    order = _q(metastore, ID_COLUMNS[table])
    with connections[metastore.alias].cursor() as cursor:
        cursor.execute(f"SELECT * FROM {_q(metastore, table)} WHERE {where} ORDER BY {order}", list(params))
        names = [c[0] for c in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _object_id(metastore: Metastore, spec: PrivilegeSpec) -> int | None:
    q = lambda n: _q(metastore, n)  # noqa: E731
    catalog = f" AND d.{q('CTLG_NAME')} = %s" if metastore.schema.has_catalogs else ""
    params: list[Any] = [spec.database, *(["hive"] if catalog else [])]
    if spec.table:
        sql = (
            f"SELECT t.{q('TBL_ID')} FROM {q('TBLS')} t JOIN {q('DBS')} d ON d.{q('DB_ID')} = t.{q('DB_ID')} "
            f"WHERE d.{q('NAME')} = %s{catalog} AND t.{q('TBL_NAME')} = %s"
        )
        params.append(spec.table)
    else:
        sql = f"SELECT d.{q('DB_ID')} FROM {q('DBS')} d WHERE d.{q('NAME')} = %s{catalog}"
    with connections[metastore.alias].cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return int(row[0]) if row else None


def _principal_filter(metastore: Metastore, principals: Iterable[Principal]) -> tuple[str, list[Any]]:
    pairs = sorted(set(principals))
    name, kind = _q(metastore, "PRINCIPAL_NAME"), _q(metastore, "PRINCIPAL_TYPE")
    clause = " OR ".join(f"({name} = %s AND {kind} = %s)" for _ in pairs) or "1 = 0"
    return f"({clause})", [v for p in pairs for v in (p.name, p.type)]


def _roles(metastore: Metastore, names: Iterable[str]) -> dict[str, dict[str, Any]]:
    wanted = sorted(set(names))
    if not wanted:
        return {}
    marks = ", ".join(["%s"] * len(wanted))
    rows = read_rows(metastore, "ROLES", f"{_q(metastore, 'ROLE_NAME')} IN ({marks})", wanted)
    return {str(r["ROLE_NAME"]): r for r in rows}


def _digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


# Planning -------------------------------------------------------------------------------------------------------


def plan_privileges(metastore: Metastore, spec: PrivilegeSpec, *, grantor: str) -> PrivilegePlan:
    """The rows ``spec`` writes on ``metastore`` when ``grantor`` (the requesting user) runs it, or Hive's refusal."""
    planner = {
        "grant": _plan_grant,
        "revoke": _plan_revoke,
        "create_role": _plan_create_role,
        "drop_role": _plan_drop_role,
        "grant_role": _plan_grant_role,
        "revoke_role": _plan_revoke_role,
    }[spec.action]
    changes, blockers, warnings, state = planner(metastore, spec, grantor)
    if metastore.config.authorization == "ranger":
        blockers.insert(
            0,
            Finding(
                "ranger_governed",
                "privileges",
                f"Metastore '{metastore.name}' is governed by Apache Ranger (METASTORE_AUTHORIZATION_"
                f"{metastore.name.upper()}=ranger): HMS grants are not enforced there; grant access in Ranger instead.",
            ),
        )
    return PrivilegePlan(
        metastore.name, spec, grantor, tuple(changes), tuple(blockers), tuple(warnings), state_digest=_digest(state)
    )


Planned = tuple[list[RowChange], list[Finding], list[Finding], Any]


def _object_rows(metastore: Metastore, spec: PrivilegeSpec) -> tuple[str, int | None, list[dict[str, Any]]]:
    table = "TBL_PRIVS" if spec.table else "DB_PRIVS"
    object_id = _object_id(metastore, spec)
    if object_id is None:
        return table, None, []
    _id, _priv, object_column = PRIVILEGE_TABLES[table]
    where, params = _principal_filter(metastore, spec.principals)
    rows = read_rows(metastore, table, f"{_q(metastore, object_column)} = %s AND {where}", [object_id, *params])
    return table, object_id, rows


def _missing_object(spec: PrivilegeSpec) -> Finding:
    what = f"Table {spec.database}.{spec.table}" if spec.table else f"Database {spec.database}"
    return Finding("object_missing", "privileges", f"{what} does not exist.")


def _authorized_rows(
    metastore: Metastore, rows: list[dict[str, Any]], *, unmarked: bool = False
) -> list[dict[str, Any]]:
    """The rows SQL-standard authorization lists: its own AUTHORIZER on 3.x and 4.0 (``ObjectStore
    .listPrincipalMTableGrants`` filters on the authorizer), every row on 2.3. ``unmarked``: rows with no AUTHORIZER
    (written before 3.0, or by a client that set none) count too — a revoke removes them, as a steward expects."""
    if not _has_authorizer(metastore):
        return rows
    return [r for r in rows if r.get("AUTHORIZER") == AUTHORIZER or (unmarked and r.get("AUTHORIZER") is None)]


def _plan_grant(metastore: Metastore, spec: PrivilegeSpec, grantor: str) -> Planned:
    table, object_id, rows = _object_rows(metastore, spec)
    if object_id is None:
        return [], [_missing_object(spec)], [], rows
    _id, privilege_column, object_column = PRIVILEGE_TABLES[table]
    has_authorizer = _has_authorizer(metastore)
    held = {
        (r["PRINCIPAL_TYPE"], r["PRINCIPAL_NAME"], r[privilege_column])
        for r in _authorized_rows(metastore, rows)
        if str(r["GRANTOR"] or "").lower() == grantor.lower()
    }
    where = f"table [{spec.database},{spec.table}]" if spec.table else f"database {spec.database}"
    changes, blockers = [], []
    for privilege in expand_privileges(spec.privileges):
        for principal in spec.principals:
            if (principal.type, principal.name, privilege) in held:
                blockers.append(
                    Finding(
                        "already_granted",
                        "privileges",
                        f"{privilege} is already granted on {where} by {grantor} (to {principal}).",
                    )
                )
                continue
            values: list[tuple[str, Any]] = [
                ("CREATE_TIME", NOW),
                ("GRANT_OPTION", int(spec.option)),
                ("GRANTOR", grantor),
                ("GRANTOR_TYPE", "USER"),
                ("PRINCIPAL_NAME", principal.name),
                ("PRINCIPAL_TYPE", principal.type),
                (privilege_column, privilege),
                (object_column, object_id),
            ]
            if has_authorizer:
                values.append(("AUTHORIZER", AUTHORIZER))
            changes.append(RowChange(table, "insert", tuple(values), label=f"{privilege} to {principal}"))
    warnings = _missing_role_principals(metastore, spec.principals)
    return changes, blockers, warnings, (object_id, rows)


def _has_authorizer(metastore: Metastore) -> bool:
    """Whether the privilege tables have AUTHORIZER (3.0 on; the column's version is declared on the model)."""
    return metastore.schema.has(DatabasePrivilege, "authorizer")


def _missing_role_principals(metastore: Metastore, principals: Iterable[Principal]) -> list[Finding]:
    named = [p.name for p in principals if p.type == "ROLE"]
    found = _roles(metastore, named)
    return [
        Finding(
            "role_missing",
            "privileges",
            f"Role {name} does not exist: the grant is stored, but nobody holds "
            "it until the role is created and granted.",
            "warning",
        )
        for name in named
        if name not in found and name not in RESERVED
    ]


def _plan_revoke(metastore: Metastore, spec: PrivilegeSpec, grantor: str) -> Planned:
    table, object_id, rows = _object_rows(metastore, spec)
    if object_id is None:
        return [], [_missing_object(spec)], [], rows
    id_column, privilege_column, _object = PRIVILEGE_TABLES[table]
    rows = _authorized_rows(metastore, rows, unmarked=True)
    changes, blockers = [], []
    for privilege in expand_privileges(spec.privileges):
        for principal in spec.principals:
            matching = [
                r
                for r in rows
                if (r["PRINCIPAL_TYPE"], r["PRINCIPAL_NAME"], r[privilege_column])
                == (principal.type, principal.name, privilege)
            ]
            label = f"{privilege} from {principal}"
            if not matching:
                blockers.append(
                    Finding(
                        "not_granted",
                        "privileges",
                        f"Cannot find privilege {privilege} for {principal} on {spec.object_label}.",
                    )
                )
                continue
            if spec.option:
                optioned = [r for r in matching if r["GRANT_OPTION"]]
                if not optioned:
                    blockers.append(
                        Finding(
                            "no_grant_option",
                            "privileges",
                            f"User {principal.name} does not have grant option with privilege {privilege}.",
                        )
                    )
                changes += [
                    RowChange(table, "update", (("GRANT_OPTION", 0),), int(r[id_column]), label) for r in optioned
                ]
            else:
                changes += [RowChange(table, "delete", _row_values(r), int(r[id_column]), label) for r in matching]
    return changes, blockers, [], (object_id, rows)


def _row_values(row: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(row.items()))


def _plan_create_role(metastore: Metastore, spec: PrivilegeSpec, grantor: str) -> Planned:
    role = spec.roles[0]
    existing = _roles(metastore, [role])
    blockers = []
    if role == "public":
        blockers.append(Finding("reserved_role", "roles", "public role implicitly exists. It can't be created."))
    elif role == "admin":
        blockers.append(
            Finding(
                "reserved_role",
                "roles",
                "Role admin already exists: the metastore creates it "
                "when it starts (HiveMetaStore.createDefaultRoles).",
            )
        )
    elif role in existing:
        blockers.append(Finding("role_exists", "roles", f"Role {role} already exists."))
    values = (("CREATE_TIME", NOW), ("OWNER_NAME", None), ("ROLE_NAME", role))
    return [RowChange("ROLES", "insert", values, label=f"role {role}")], blockers, [], sorted(existing)


def _plan_drop_role(metastore: Metastore, spec: PrivilegeSpec, grantor: str) -> Planned:
    role = spec.roles[0]
    if role in RESERVED:
        return [], [Finding("reserved_role", "roles", "public,admin roles can't be dropped.")], [], None
    found = _roles(metastore, [role]).get(role)
    if found is None:
        return [], [Finding("role_missing", "roles", f"Role {role} does not exist.")], [], None
    q = lambda n: _q(metastore, n)  # noqa: E731
    role_id = int(found["ROLE_ID"])
    changes: list[RowChange] = []
    members = read_rows(metastore, "ROLE_MAP", f"{q('ROLE_ID')} = %s", [role_id])
    memberships = read_rows(
        metastore, "ROLE_MAP", f"{q('PRINCIPAL_NAME')} = %s AND {q('PRINCIPAL_TYPE')} = %s", [role, "ROLE"]
    )
    for row in members + [m for m in memberships if m not in members]:
        changes.append(
            RowChange(
                "ROLE_MAP",
                "delete",
                _row_values(row),
                int(row["ROLE_GRANT_ID"]),
                f"{row['PRINCIPAL_TYPE']} {row['PRINCIPAL_NAME']} in role #{row['ROLE_ID']}",
            )
        )
    for table, id_column in _grant_tables(metastore).items():
        for row in read_rows(
            metastore, table, f"{q('PRINCIPAL_NAME')} = %s AND {q('PRINCIPAL_TYPE')} = %s", [role, "ROLE"]
        ):
            changes.append(RowChange(table, "delete", _row_values(row), int(row[id_column]), f"grant to ROLE {role}"))
    changes.append(RowChange("ROLES", "delete", _row_values(found), role_id, f"role {role}"))
    return changes, [], [], [c.as_dict() for c in changes]


def _grant_tables(metastore: Metastore) -> dict[str, str]:
    """Every privilege table of the metastore's schema (DC_PRIVS where it exists), with its id column."""
    connection = connections[metastore.alias]
    with connection.cursor() as cursor:
        present = {name.upper() for name in connection.introspection.table_names(cursor)}
    extra = dict([CONNECTOR_GRANTS]) if CONNECTOR_GRANTS[0] in present else {}
    return {**GRANT_TABLES, **extra}


def _role_graph(metastore: Metastore) -> dict[str, set[str]]:
    """role -> the roles it is a member of (ROLE_MAP rows whose principal is a role), in one query."""
    q = lambda n: _q(metastore, n)  # noqa: E731
    sql = (
        f"SELECT m.{q('PRINCIPAL_NAME')}, r.{q('ROLE_NAME')} FROM {q('ROLE_MAP')} m JOIN {q('ROLES')} r "
        f"ON r.{q('ROLE_ID')} = m.{q('ROLE_ID')} WHERE m.{q('PRINCIPAL_TYPE')} = %s"
    )
    graph: dict[str, set[str]] = {}
    with connections[metastore.alias].cursor() as cursor:
        cursor.execute(sql, ["ROLE"])
        for member, parent in cursor.fetchall():
            graph.setdefault(str(member), set()).add(str(parent))
    return graph


def ancestors(graph: dict[str, set[str]], role: str) -> set[str]:
    """Every role ``role`` belongs to, transitively."""
    seen: set[str] = set()
    stack = [role]
    while stack:
        for parent in graph.get(stack.pop(), ()):
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    return seen


def _membership_rows(metastore: Metastore, spec: PrivilegeSpec, roles: dict[str, dict[str, Any]]) -> list[dict]:
    ids = [int(r["ROLE_ID"]) for r in roles.values()]
    if not ids:
        return []
    where, params = _principal_filter(metastore, spec.principals)
    marks = ", ".join(["%s"] * len(ids))
    return read_rows(metastore, "ROLE_MAP", f"{_q(metastore, 'ROLE_ID')} IN ({marks}) AND {where}", [*ids, *params])


def _plan_grant_role(metastore: Metastore, spec: PrivilegeSpec, grantor: str) -> Planned:
    roles = _roles(metastore, spec.roles)
    blockers = [Finding("role_missing", "roles", f"Role {r} does not exist.") for r in spec.roles if r not in roles]
    if "public" in spec.roles:
        blockers.append(
            Finding(
                "reserved_role",
                "roles",
                "No user can be added to public. Since all users implictly belong to public role.",
            )
        )
    held = {
        (int(r["ROLE_ID"]), r["PRINCIPAL_TYPE"], r["PRINCIPAL_NAME"]) for r in _membership_rows(metastore, spec, roles)
    }
    graph = _role_graph(metastore) if any(p.type == "ROLE" for p in spec.principals) else {}
    changes = []
    for role in (r for r in spec.roles if r in roles):
        role_id = int(roles[role]["ROLE_ID"])
        for principal in spec.principals:
            if principal.type == "ROLE" and (principal.name == role or principal.name in ancestors(graph, role)):
                blockers.append(
                    Finding(
                        "role_cycle",
                        "roles",
                        f"Cannot grant role {principal.name} to {role} as {role} already belongs to "
                        f"the role {principal.name}. (no cycles allowed)",
                    )
                )
                continue
            if (role_id, principal.type, principal.name) in held:
                blockers.append(
                    Finding("already_granted", "roles", f"Principal {principal.name} already has the role {role}")
                )
                continue
            values = (
                ("ADD_TIME", NOW),
                ("GRANT_OPTION", int(spec.option)),
                ("GRANTOR", grantor),
                ("GRANTOR_TYPE", "USER"),
                ("PRINCIPAL_NAME", principal.name),
                ("PRINCIPAL_TYPE", principal.type),
                ("ROLE_ID", role_id),
            )
            changes.append(RowChange("ROLE_MAP", "insert", values, label=f"role {role} to {principal}"))
    return changes, blockers, _missing_role_principals(metastore, spec.principals), sorted(held)


def _plan_revoke_role(metastore: Metastore, spec: PrivilegeSpec, grantor: str) -> Planned:
    roles = _roles(metastore, spec.roles)
    blockers = [Finding("role_missing", "roles", f"Role {r} does not exist.") for r in spec.roles if r not in roles]
    rows = {
        (int(r["ROLE_ID"]), r["PRINCIPAL_TYPE"], r["PRINCIPAL_NAME"]): r
        for r in _membership_rows(metastore, spec, roles)
    }
    changes = []
    for role in (r for r in spec.roles if r in roles):
        for principal in spec.principals:
            row = rows.get((int(roles[role]["ROLE_ID"]), principal.type, principal.name))
            label = f"role {role} from {principal}"
            if row is None:
                blockers.append(Finding("not_granted", "roles", f"{principal} has not been granted role {role}."))
            elif spec.option and not row["GRANT_OPTION"]:
                blockers.append(
                    Finding(
                        "no_grant_option", "roles", f"User {principal.name} does not have grant option with role {role}"
                    )
                )
            elif spec.option:
                changes.append(
                    RowChange("ROLE_MAP", "update", (("GRANT_OPTION", 0),), int(row["ROLE_GRANT_ID"]), label)
                )
            else:
                changes.append(RowChange("ROLE_MAP", "delete", _row_values(row), int(row["ROLE_GRANT_ID"]), label))
    return changes, blockers, [], sorted(rows)


# Restoring (a revert) ---------------------------------------------------------------------------------------------


def plan_restore(
    metastore: Metastore,
    spec: PrivilegeSpec,
    *,
    grantor: str,
    execution_id: int,
    applied: list[dict[str, Any]],
    original: str,
) -> PrivilegePlan:
    """The plan putting back exactly what an execution changed (``applied``: its changes as executed, with ids and
    values): its inserted rows deleted, its deleted rows inserted with their ids, its updates undone. ``spec`` is the
    inverse statement (a grant's revoke, a revoke's grant), shown to approvers; refused when the rows are not as the
    execution left them."""
    changes, blockers, state = [], [], []
    for item in reversed(applied):
        table, row_id = item["table"], int(item["row_id"])
        now = read_rows(metastore, table, f"{_q(metastore, ID_COLUMNS[table])} = %s", [row_id])
        state.append([table, row_id, [_jsonable(v) for v in (now[0].values() if now else [])]])
        if item["action"] == "insert":
            if not now:
                blockers.append(
                    Finding("row_changed", "privileges", f"{table} row #{row_id} ({item['label']}) is gone already.")
                )
            changes.append(RowChange(table, "delete", _row_values(now[0]) if now else (), row_id, item["label"]))
        elif item["action"] == "delete":
            if now:
                blockers.append(Finding("row_changed", "privileges", f"{table} row #{row_id} exists again."))
            changes.append(RowChange(table, "insert", tuple(sorted(item["values"].items())), row_id, item["label"]))
        else:
            before = item.get("before") or {}
            if not now or any(_jsonable(now[0].get(k)) != v for k, v in item["values"].items()):
                blockers.append(
                    Finding("row_changed", "privileges", f"{table} row #{row_id} ({item['label']}) changed since.")
                )
            changes.append(RowChange(table, "update", tuple(sorted(before.items())), row_id, item["label"]))
    return PrivilegePlan(
        metastore.name,
        spec,
        grantor,
        tuple(changes),
        tuple(blockers),
        reverts=execution_id,
        reverted_statement=original,
        state_digest=_digest(state),
    )


def _jsonable(value: Any) -> Any:
    return int(value) if isinstance(value, bool) else value
