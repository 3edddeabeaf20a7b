"""
Column changes: ADD COLUMNS, REPLACE COLUMNS, CHANGE [COLUMN], with or without CASCADE.

The table gets one new column descriptor; with CASCADE every partition is pointed at that same
descriptor in one statement (Hive creates one descriptor per partition). Descriptors nobody uses any
more are removed, as Hive's ``removeUnusedColumnDescriptor`` does. Statistics are kept wherever the data
did not change: a renamed column keeps its statistics under the new name (Hive drops them); a type
change or a dropped column drops that column's statistics, where its data changes meaning.
A CHANGE that renames a bucketing column renames it in BUCKETING_COLS too, as Hive's client does since 4.0, and a
sort column in SORT_COLS.
Spark's copy of the schema (``spark.sql.sources.schema``) follows.

This module assembles the plan; the parts live beside it: the new column list (``listing``), bucketing and sort
columns (``bucket_sort``), the statements (``steps``), the accuracy flags (``flags``) and Hive's own cost
(``hive_cost``).
"""

from __future__ import annotations

from catalog_admin.models import BucketingColumn, Partition, SortColumn
from catalog_admin.selectors.metastores import Metastore
from operations.dependent_views import dependent_views_warning
from operations.planners.columns.bucket_sort import (
    LIST_LABELS,
    bucket_findings,
    list_rename,
    list_rename_steps,
    listed_columns,
    sort_findings,
)
from operations.planners.columns.flags import FlagPlan, params_after, partition_flag_plan
from operations.planners.columns.hive_cost import hive_comparison
from operations.planners.columns.listing import ColumnPlan, column_findings, new_columns
from operations.planners.columns.steps import (
    descriptor_steps,
    partition_statistics_steps,
    table_param_steps,
    table_statistics_steps,
    touched_partition_statistics,
)
from operations.planners.common import build_preview, snapshot
from operations.planners.spark_tables import datasource_column_blockers, renamed_by_name_warnings
from operations.preview import Preview, Step
from operations.rules import Finding
from operations.specs import AddColumns, ChangeColumn, ReplaceColumns
from operations.sql import MetastoreSql
from operations.table_state import TableState

__all__ = ("plan_column_change",)


def plan_column_change(
    metastore: Metastore, state: TableState, spec: AddColumns | ReplaceColumns | ChangeColumn
) -> Preview:
    """The plan of a column change on ``state``: a pure read."""
    plan = new_columns(state, spec)
    listed = {model: listed_columns(metastore, state, model) for model in LIST_LABELS}
    renames = {model: list_rename(spec, plan, names) for model, names in listed.items()}
    plan.list_renames = {model: renamed for model, renamed in renames.items() if renamed}
    findings = column_findings(metastore, state, spec, plan) + bucket_findings(metastore, plan, listed[BucketingColumn])
    findings += sort_findings(plan, listed[SortColumn]) + datasource_column_blockers(state, spec, "spark")
    plan.blockers += [f for f in findings if f.severity == "blocker"]
    plan.warnings += [f for f in findings if f.severity != "blocker"]
    cascade = spec.cascade and state.is_partitioned
    touched = touched_partition_statistics(metastore, state, plan)
    sql = MetastoreSql(metastore.alias)
    steps: list[Step] = []
    flags = FlagPlan()
    dropped_stats = moved_stats = 0
    if not plan.blockers:
        steps += descriptor_steps(metastore, sql, state, plan, cascade)
        steps += list_rename_steps(metastore, sql, state, plan, cascade)
        table_steps, table_dropped, table_moved = table_statistics_steps(metastore, sql, state, plan)
        steps += table_steps
        dropped_stats += table_dropped
        moved_stats += table_moved
        if cascade:
            part_steps, part_dropped, part_moved = partition_statistics_steps(sql, state, plan, touched)
            flags = partition_flag_plan(metastore, sql, state, plan)
            steps += part_steps + flags.steps
            dropped_stats += part_dropped
            moved_stats += part_moved
        steps += table_param_steps(sql, state, plan)
    new_params = params_after(state, plan)
    return build_preview(
        metastore,
        state,
        spec,
        steps=steps,
        after=snapshot(
            state,
            columns=tuple((c.name, c.type, c.comment) for c in plan.columns),
            params=tuple(sorted(new_params.items())),
        ),
        blockers=plan.blockers,
        warnings=_warnings(metastore, state, plan, cascade),
        partitions_touched=state.partitions.count if cascade else 0,
        statistics_moved=moved_stats,
        statistics_dropped=dropped_stats,
        columns_changed=True,
        hive=hive_comparison(metastore, state, spec, plan, touched),
        inverse=_inverse(metastore, state, plan, cascade, flags.inverse, new_params),
    )


def _inverse(
    metastore: Metastore,
    state: TableState,
    plan: ColumnPlan,
    cascade: bool,
    flag_inverse: list[list[str]],
    new_params: dict[str, str | None],
) -> dict:
    """What a revert needs beyond the rows execution keeps: the old descriptors, the renames and the flags' inverse
    rule, and the table parameters the change touches with their old values."""
    return {
        "table_cd": state.cd_id,
        "columns": [(c.name, c.type, c.comment) for c in state.columns],
        "partition_cds": list(state.partitions.column_descriptors) if cascade else [],
        "partition_cd_map": _partition_cd_map(metastore, state) if cascade else {},
        "renamed": plan.renamed,
        "cascade": cascade,
        "flag_inverse": flag_inverse,
        "table_params": {
            k: state.params.get(k)
            for k in new_params.keys() | state.params.keys()
            if new_params.get(k) != state.params.get(k)
        },
    }


def _partition_cd_map(metastore: Metastore, state: TableState) -> dict[str, list[int]]:
    """Which storage descriptors used which descriptor (``"null"``: none), kept only when partitions did not all share
    one."""
    summary = state.partitions
    with_descriptor = sum(users for _cd, users in summary.descriptor_users)
    if len(summary.column_descriptors) <= 1 and with_descriptor == summary.count:
        return {}
    mapping: dict[str, list[int]] = {}
    rows = Partition.objects.using(metastore.alias).filter(table_id=state.table_id).values_list("sd__cd_id", "sd_id")
    for cd_id, sd_id in rows:
        mapping.setdefault("null" if cd_id is None else str(cd_id), []).append(sd_id)
    return mapping


def _warnings(metastore: Metastore, state: TableState, plan: ColumnPlan, cascade: bool) -> list[Finding]:
    """The rules' warnings, and what the steward should know: partitions left alone, statistics kept, Spark's copy,
    views that read the table."""
    warnings = list(plan.warnings)
    if state.is_partitioned and not cascade:
        warnings.append(
            Finding(
                "not_cascaded",
                "10.4",
                f"The table's {state.partitions.count} partitions keep their old columns "
                "(add CASCADE to change them too).",
                "warning",
            )
        )
    if plan.renamed:
        warnings.append(
            Finding(
                "stats_kept",
                "11.5",
                "Statistics of renamed columns are kept under the new name (Hive drops them).",
                "warning",
            )
        )
    if state.params.get("spark.sql.sources.provider"):
        warnings.append(
            Finding(
                "spark_datasource",
                "spark",
                "This is a Spark data-source table; Spark's schema copy is rewritten to match.",
                "warning",
            )
        )
    warnings += renamed_by_name_warnings(state, [plan.column_rename] if plan.column_rename else [], "files")
    if plan.renamed or plan.stats_dropped:
        consequence = "may fail where they use a renamed, retyped or dropped column"
        warnings += dependent_views_warning(metastore, state.ref, consequence)
    return warnings
