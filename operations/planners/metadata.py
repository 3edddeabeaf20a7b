"""
Table-level metadata changes: SET/UNSET TBLPROPERTIES, SET SERDEPROPERTIES, SET OWNER.

None of these touches partitions (rule 10.5). Hive's TransactionalValidationListener rules apply to
``transactional``: it cannot be unset or set to false once true, and a table becomes ACID only when it
is managed and stored in an ACID format (ORC; Hive 2.3 also wants it bucketed).
"""

from __future__ import annotations

from catalog_admin.models import SerDeParam, Table, TableParam
from catalog_admin.selectors.metastores import Metastore
from operations.planners.common import (
    build_preview,
    param_delete_steps,
    param_upsert_steps,
    replication_source,
    snapshot,
)
from operations.preview import Preview, Step
from operations.rules import Finding
from operations.specs import SetOwner, SetSerdeProperties, SetTableProperties, UnsetTableProperties
from operations.sql import MetastoreSql
from operations.table_state import TableState

__all__ = (
    "owner_step",
    "plan_set_owner",
    "plan_set_serde_properties",
    "plan_set_table_properties",
    "plan_unset_table_properties",
    "table_type_step",
)

ORC_INPUT_FORMAT = "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat"
SPARK_PREFIX = "spark.sql."


def plan_set_table_properties(metastore: Metastore, state: TableState, spec: SetTableProperties) -> Preview:
    sql = MetastoreSql(metastore.alias)
    values = dict(spec.properties)
    steps = param_upsert_steps(sql, TableParam, "table", state.table_id, state.params, spec.properties)
    new_type = _type_after_external_change(state, values)
    inverse = _restore_params(state.params, list(values))
    if new_type != state.table_type:
        steps.append(table_type_step(sql, state.table_id, new_type))
        inverse["table_type"] = state.table_type
    after = snapshot(state, type=new_type, params=tuple(sorted({**state.params, **values}.items())))
    blockers = _transactional_blockers(metastore, state, values) + _replication_blockers(
        metastore, state, new_type, values
    )
    return build_preview(
        metastore,
        state,
        spec,
        steps=steps,
        after=after,
        blockers=blockers,
        warnings=_spark_key_warnings(values),
        inverse=inverse,
    )


def plan_unset_table_properties(metastore: Metastore, state: TableState, spec: UnsetTableProperties) -> Preview:
    sql = MetastoreSql(metastore.alias)
    present = [k for k in spec.keys if k in state.params]
    blockers = [
        Finding("unknown_property", "ddl", f"Attempt to unset table property '{k}' that does not exist")
        for k in spec.keys
        if k not in state.params and not spec.if_exists
    ]
    if "transactional" in present and state.is_transactional:
        blockers.append(Finding("acid_unset", "acid", "TBLPROPERTIES with 'transactional'='true' cannot be unset"))
    params = {k: v for k, v in state.params.items() if k not in present}
    return build_preview(
        metastore,
        state,
        spec,
        steps=param_delete_steps(sql, TableParam, "table", state.table_id, present),
        after=snapshot(state, params=tuple(sorted(params.items()))),
        blockers=blockers,
        warnings=_spark_key_warnings(dict.fromkeys(present, "")),
        inverse=_restore_params(state.params, present),
    )


def plan_set_serde_properties(metastore: Metastore, state: TableState, spec: SetSerdeProperties) -> Preview:
    sql = MetastoreSql(metastore.alias)
    blockers = [] if state.serde_id else [Finding("no_serde", "ddl", f"{state.ref} has no SerDe to set properties on")]
    steps = (
        param_upsert_steps(sql, SerDeParam, "serde", state.serde_id, state.serde_params, spec.properties)
        if state.serde_id
        else []
    )
    serde_params = {**state.serde_params, **dict(spec.properties)}
    return build_preview(
        metastore,
        state,
        spec,
        steps=steps,
        after=snapshot(state, serde_params=tuple(sorted(serde_params.items()))),
        blockers=blockers,
        inverse={"serde_params": state.serde_params, "keys": [k for k, _v in spec.properties]},
    )


def plan_set_owner(metastore: Metastore, state: TableState, spec: SetOwner) -> Preview:
    sql = MetastoreSql(metastore.alias)
    description = f"Give {state.ref} to {spec.principal_type.lower()} {spec.principal}"
    step = owner_step(metastore, sql, state.table_id, spec.principal, spec.principal_type, description)
    warnings = []
    if spec.principal_type != "USER" and not metastore.schema.has(Table, "owner_type"):
        warnings.append(
            Finding(
                "owner_type_unsupported",
                "ddl",
                f"Hive {metastore.schema.version} has no TBLS.OWNER_TYPE: the owner is stored as a plain name.",
                "warning",
            )
        )
    return build_preview(
        metastore,
        state,
        spec,
        steps=[step],
        after=snapshot(state, owner=spec.principal),
        blockers=[],
        warnings=warnings,
        inverse={"owner": state.owner, "owner_type": state.owner_type},
    )


def _transactional_blockers(metastore: Metastore, state: TableState, values: dict[str, str]) -> list[Finding]:
    if "transactional" not in values:
        return []
    wanted = values["transactional"].lower()
    if state.is_transactional and wanted != "true":
        return [Finding("acid_unset", "acid", "TBLPROPERTIES with 'transactional'='true' cannot be unset")]
    if state.is_transactional or wanted != "true":
        return []
    blockers = []
    if state.is_external or (values.get("EXTERNAL") or "").upper() == "TRUE":
        blockers.append(
            Finding(
                "acid_external", "acid", f"{state.ref} cannot be declared transactional because it's an external table"
            )
        )
    if state.input_format != ORC_INPUT_FORMAT and values.get("transactional_properties") != "insert_only":
        blockers.append(
            Finding(
                "acid_format",
                "acid",
                f"The table must be stored using an ACID compliant format (such as ORC): {state.ref}",
            )
        )
    if metastore.schema.capabilities.acid_requires_bucketing and not _is_bucketed(metastore, state):
        blockers.append(
            Finding(
                "acid_bucketing",
                "acid",
                f"The table must be bucketed and stored using an ACID compliant format (such as ORC): {state.ref}",
            )
        )
    return blockers


def _is_bucketed(metastore: Metastore, state: TableState) -> bool:
    from catalog_admin.models import BucketingColumn

    return BucketingColumn.objects.using(metastore.alias).filter(sd_id=state.sd_id).exists()


def _type_after_external_change(state: TableState, values: dict[str, str]) -> str:
    """Hive turns a table external (or managed) when the ``EXTERNAL`` property changes."""
    if "EXTERNAL" not in values or state.is_view:
        return state.table_type
    return "EXTERNAL_TABLE" if values["EXTERNAL"].upper() == "TRUE" else "MANAGED_TABLE"


def owner_step(
    metastore: Metastore, sql: MetastoreSql, table_id: int, owner: str | None, owner_type: str | None, description: str
) -> Step:
    """Set TBLS.OWNER and, where the schema has it, OWNER_TYPE (NULL included)."""
    values = {"owner": owner}
    if metastore.schema.has(Table, "owner_type"):
        values["owner_type"] = owner_type
    assignments = ", ".join(f"{sql.col(Table, name)} = %s" for name in values)
    return Step(
        description,
        "TBLS",
        "update",
        f"UPDATE {sql.table(Table)} SET {assignments} WHERE {sql.col(Table, 'id')} = %s",
        (*values.values(), table_id),
        1,
    )


def table_type_step(sql: MetastoreSql, table_id: int, new_type: str) -> Step:
    return Step(
        f"Make the table {new_type}",
        "TBLS",
        "update",
        f"UPDATE {sql.table(Table)} SET {sql.col(Table, 'type')} = %s WHERE {sql.col(Table, 'id')} = %s",
        (new_type, table_id),
        1,
    )


def _replication_blockers(
    metastore: Metastore, state: TableState, new_type: str, values: dict[str, str]
) -> list[Finding]:
    """Rule 4.2 (4.x, ``hive.strict.managed.tables`` off): in a replication source, no table type change and no
    conversion to ACID."""
    becomes_acid = not state.is_transactional and (values.get("transactional") or "").lower() == "true"
    changes_type = new_type != state.table_type
    if not metastore.schema.capabilities.replication_source_guards or not (becomes_acid or changes_type):
        return []
    if not replication_source(metastore, state.ref.database):
        return []
    table = f"{state.ref.database}.{state.ref.table}"
    blockers = []
    if changes_type:
        blockers.append(
            Finding(
                "replication_type_change",
                "4.2",
                f"Table type cannot be changed from {state.table_type} to {new_type} for the table {table} as it is "
                "enabled for replication.",
            )
        )
    if becomes_acid:
        blockers.append(
            Finding(
                "replication_acid_conversion",
                "4.2",
                f"A non-Acid table cannot be converted to an Acid table for the table {table} as it is enabled for "
                "replication.",
            )
        )
    return blockers


def _spark_key_warnings(values: dict[str, str]) -> list[Finding]:
    keys = sorted(k for k in values if k.startswith(SPARK_PREFIX))
    if not keys:
        return []
    return [
        Finding(
            "spark_properties",
            "spark",
            f"{', '.join(keys)} belong to Spark's own copy of the table; changing them by hand can make Spark read the "
            "table differently.",
            "warning",
        )
    ]


def _restore_params(current: dict[str, str | None], keys: list[str]) -> dict:
    """The before-image of the touched keys: their old values, or None where a key did not exist."""
    return {"table_params": {k: current.get(k) for k in keys}}
