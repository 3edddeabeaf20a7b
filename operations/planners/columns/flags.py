"""
Statistics flags: COLUMN_STATS_ACCURATE names the columns whose statistics are accurate, in the table's and every
partition's parameters. A dropped column's flag goes and a renamed column's follows its new name, set-based over
every partition (Hive writes the flags as compact JSON). The table parameters after the change (flags and Spark's
schema copy) are computed here too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from functools import reduce
from operator import or_

from django.db.models import Count, Q

from catalog_admin.hive.statistics import COLUMN_STATS_ACCURATE
from catalog_admin.models import PartitionParam
from catalog_admin.selectors.metastores import Metastore
from operations.planners.columns.listing import ColumnPlan
from operations.preview import Step
from operations.spark_schema import rename_spark_bucket_sort_columns, rewrite_spark_schema
from operations.sql import MetastoreSql
from operations.table_state import TableState

__all__ = (
    "FLAG_EDITS_PER_STEP",
    "STATS_KEY",
    "FlagPlan",
    "params_after",
    "partition_flag_plan",
    "partition_flag_steps",
)

STATS_KEY = COLUMN_STATS_ACCURATE
# Flag edits nested in one UPDATE: three REPLACE calls each at most, well below every database's expression depth.
FLAG_EDITS_PER_STEP = 50


@dataclass(frozen=True)
class FlagPlan:
    """The statements that edit every partition's COLUMN_STATS_ACCURATE flags, and their revert.

    ``inverse`` is the exact inverse rule (``[new flag, old flag]`` pairs, one rule for any number of partitions)
    when renames alone move flags onto names no flag carries yet; otherwise it is empty and the first step keeps the
    rows it changes for a revert."""

    steps: list[Step] = field(default_factory=list)
    inverse: list[list[str]] = field(default_factory=list)


def partition_flag_plan(metastore: Metastore, sql: MetastoreSql, state: TableState, plan: ColumnPlan) -> FlagPlan:
    """Edit every partition's COLUMN_STATS_ACCURATE flags; the revert is returned alongside (:class:`FlagPlan`)."""
    edits = _flag_edits(plan)
    if not edits:
        return FlagPlan()
    changing, naming_new = _flag_counts(metastore, state.table_id, edits)
    compact = not plan.stats_dropped and not naming_new
    inverse = [[new, old] for old, new in edits] if compact else []
    # With one statement (at most FLAG_EDITS_PER_STEP edits) its row count is the one just made.
    known = changing if len(edits) <= FLAG_EDITS_PER_STEP else None
    steps = partition_flag_steps(metastore, sql, state.table_id, edits, keep_rows=not compact, rows=known)
    return FlagPlan(steps, inverse)


def _flag_counts(metastore: Metastore, table_id: int, edits: list[tuple[str, str]]) -> tuple[int, int]:
    """In one pass over the table's partitions' flags: rows carrying any old flag, and rows already carrying a new."""
    flagged = PartitionParam.objects.using(metastore.alias).filter(partition__table_id=table_id, key=STATS_KEY)
    olds = reduce(or_, (Q(value__contains=old) for old, _new in edits))
    news = [Q(value__contains=new) for _old, new in edits if new]
    counts = {"changing": Count("partition", filter=olds)}
    if news:
        counts["naming_new"] = Count("partition", filter=reduce(or_, news))
    found = flagged.aggregate(**counts)
    return found["changing"], found.get("naming_new", 0)


def partition_flag_steps(
    metastore: Metastore,
    sql: MetastoreSql,
    table_id: int,
    edits: list[tuple[str, str]],
    *,
    keep_rows: bool,
    rows: int | None = None,
) -> list[Step]:
    """Apply ``edits`` to the table's partitions' COLUMN_STATS_ACCURATE flags set-based (Hive writes them as compact
    JSON): all edits of a row in one UPDATE (per group of edits); with ``keep_rows`` the first statement keeps every
    row any statement changes, once, with its original value. ``rows``: the count of a single statement, if known."""
    value, key = sql.col(PartitionParam, "value"), sql.col(PartitionParam, "key")
    owners = f"{sql.of_table_partitions(sql.col(PartitionParam, 'partition'))} AND {key} = %s"
    flagged = PartitionParam.objects.using(metastore.alias).filter(partition__table_id=table_id, key=STATS_KEY)
    steps, changes = [], []
    for start in range(0, len(edits), FLAG_EDITS_PER_STEP):
        group = edits[start : start + FLAG_EDITS_PER_STEP]
        single = rows is not None and len(edits) <= FLAG_EDITS_PER_STEP
        changed_rows = (
            rows if single else flagged.filter(reduce(or_, (Q(value__contains=o) for o, _n in group))).count()
        )
        if not changed_rows:
            continue
        expression, params = _flag_expression(value, group)
        changes.append((f"{value} <> {expression}", params))
        steps.append(
            Step(
                f"Update partition statistics flags for {', '.join(old for old, _new in group)}",
                "PARTITION_PARAMS",
                "update",
                f"UPDATE {sql.table(PartitionParam)} SET {value} = {expression} "
                f"WHERE {owners} AND {value} <> {expression}",
                (*params, table_id, STATS_KEY, *params),
                changed_rows,
            )
        )
    if not steps or not keep_rows:
        return steps
    # The old flags cannot be derived from the new ones: the first step keeps every row any step changes.
    changed = " OR ".join(condition for condition, _params in changes)
    steps[0] = replace(
        steps[0],
        before_sql=f"SELECT * FROM {sql.table(PartitionParam)} WHERE {owners} AND ({changed})",
        before_params=(table_id, STATS_KEY, *(p for _condition, params in changes for p in params)),
    )
    return steps


def _flag_edits(plan: ColumnPlan) -> list[tuple[str, str]]:
    """``(flag, replacement)`` pairs: a dropped column's flag goes, a renamed column's follows its new name."""
    edits = [(f'"{n}":"true"', "") for n in sorted(plan.stats_dropped)]
    return edits + [(f'"{o}":"true"', f'"{n}":"true"') for o, n in sorted(plan.renamed.items())]


def _flag_expression(column: str, edits: list[tuple[str, str]]) -> tuple[str, tuple[str, ...]]:
    """Nested REPLACE calls applying ``edits`` in order, and their parameters; a dropped flag takes its comma along."""
    expression, params = column, []
    for old, new in edits:
        pairs = [(old, new)] if new else [(f",{old}", ""), (f"{old},", ""), (old, "")]
        for find, put in pairs:
            expression = f"REPLACE({expression}, %s, %s)"
            params += [find, put]
    return expression, tuple(params)


def params_after(state: TableState, plan: ColumnPlan) -> dict[str, str | None]:
    """The table's parameters after the change: accuracy flags edited, Spark's schema copy rewritten, and Spark's
    bucketing and sort columns following a renamed column."""
    params = dict(state.params)
    flags = params.get(STATS_KEY)
    if flags:
        params[STATS_KEY] = _edit_flags(flags, plan)
    spark = rewrite_spark_schema(
        params,
        [(c.name, c.type, c.comment) for c in plan.columns],
        [k.name for k in state.partition_keys],
        plan.renamed,
    )
    if spark:
        params.update(spark)
    if plan.column_rename:
        params.update(rename_spark_bucket_sort_columns(params, *plan.column_rename))
    return params


def _edit_flags(raw: str, plan: ColumnPlan) -> str:
    try:
        flags = json.loads(raw)
    except ValueError:
        return raw
    columns = flags.get("COLUMN_STATS") if isinstance(flags, dict) else None
    if not isinstance(columns, dict):
        return raw
    for name in plan.stats_dropped:
        columns.pop(name, None)
    for old, new in plan.renamed.items():
        if old in columns:
            columns[new] = columns.pop(old)
    return json.dumps(flags, separators=(",", ":"))
