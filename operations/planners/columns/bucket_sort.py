"""
Bucketing and sort columns: BUCKETING_COLS and SORT_COLS name columns of the storage descriptor, so a CHANGE that
renames one renames it there too (Hive's client does for bucketing columns since 4.0).
"""

from __future__ import annotations

from catalog_admin.models import BucketingColumn, Partition, SortColumn
from catalog_admin.selectors.metastores import Metastore
from operations.planners.columns.listing import ColumnPlan
from operations.preview import Step
from operations.rules import Finding, check_bucket_columns
from operations.specs import AddColumns, ChangeColumn, ReplaceColumns
from operations.sql import MetastoreSql
from operations.table_state import TableState

__all__ = (
    "LIST_LABELS",
    "ColumnList",
    "bucket_findings",
    "list_rename",
    "list_rename_steps",
    "listed_columns",
    "sort_findings",
)


ColumnList = type[BucketingColumn] | type[SortColumn]
LIST_LABELS: dict[ColumnList, str] = {BucketingColumn: "bucketing", SortColumn: "sort"}


def listed_columns(metastore: Metastore, state: TableState, model: ColumnList) -> list[str]:
    """The column names of the table's BUCKETING_COLS or SORT_COLS, in order."""
    if not state.sd_id:
        return []
    rows = model.objects.using(metastore.alias).filter(sd_id=state.sd_id).order_by("position")
    return [name for name in rows.values_list("name", flat=True) if name is not None]


def list_rename(
    spec: AddColumns | ReplaceColumns | ChangeColumn, plan: ColumnPlan, listed: list[str]
) -> tuple[str, str] | None:
    """The listed column a CHANGE renames: (stored name, new name). Hive's client (HIVE-22826, 4.0) renames a bucketing
    column by removing the old name and appending the new one; the console keeps its position, so the order stays."""
    if not isinstance(spec, ChangeColumn) or plan.blockers:
        return None
    old, new = spec.old_name.lower(), spec.column.name.lower()
    stored = next((name for name in listed if name.lower() == old), None)
    return (stored, new) if stored is not None and old != new else None


def _after_rename(listed: list[str], renamed: tuple[str, str] | None) -> list[str]:
    return [renamed[1] if renamed and name == renamed[0] else name for name in listed]


def bucket_findings(metastore: Metastore, plan: ColumnPlan, bucket_columns: list[str]) -> list[Finding]:
    """Rule 2.5 on the bucketing columns after the change, and what renaming one means for this version."""
    version = metastore.schema.version
    findings = []
    renamed = plan.list_renames.get(BucketingColumn)
    if renamed and not version.capabilities.renames_bucketing_columns:
        findings.append(
            Finding(
                "bucket_column_renamed",
                "2.5",
                f"The bucketing column {renamed[0]} is renamed to {renamed[1]} too: Hive {version.major}."
                f"{version.minor} would leave the bucketing column dangling.",
                "warning",
            )
        )
    after = _after_rename(bucket_columns, renamed)
    return check_bucket_columns(after, [c.name for c in plan.columns], version) + findings


def sort_findings(plan: ColumnPlan, sort_columns: list[str]) -> list[Finding]:
    """A renamed sort column follows its column; one the new columns no longer have is named (Hive checks neither)."""
    renamed = plan.list_renames.get(SortColumn)
    findings = []
    if renamed:
        findings.append(
            Finding(
                "sort_column_renamed",
                "ddl",
                f"The sort column {renamed[0]} is renamed to {renamed[1]} too, so the table stays sorted by it.",
                "warning",
            )
        )
    names = {c.name.lower() for c in plan.columns}
    dangling = [name for name in _after_rename(sort_columns, renamed) if name.lower() not in names]
    if dangling:
        findings.append(
            Finding(
                "sort_columns_dangling",
                "ddl",
                f"Sort columns [{', '.join(dangling)}] are not table columns any more: the table would stay sorted by "
                "columns it no longer has.",
                "warning",
            )
        )
    return findings


def list_rename_steps(
    metastore: Metastore, sql: MetastoreSql, state: TableState, plan: ColumnPlan, cascade: bool
) -> list[Step]:
    """Rename each renamed listed column in the table's storage descriptor (and, with CASCADE, in its partitions'), in
    one statement per list that first keeps the old rows for a revert."""
    steps = []
    for model, (old, new) in plan.list_renames.items():
        name, sd = sql.col(model, "name"), sql.col(model, "sd")
        owners, owner_params = f"{sd} = %s", (state.sd_id,)
        rows = 1
        if cascade:
            owners = f"({owners} OR {sql.of_table_partitions(sd, 'sd')})"
            owner_params += (state.table_id,)
            partition_sds = Partition.objects.using(metastore.alias).filter(table_id=state.table_id).values("sd_id")
            rows += model.objects.using(metastore.alias).filter(sd_id__in=partition_sds, name=old).count()
        where, where_params = f"{name} = %s AND {owners}", (old, *owner_params)
        scope = "the table and its partitions" if cascade else "the table"
        steps.append(
            Step(
                f"Rename the {LIST_LABELS[model]} column {old} to {new} for {scope}",
                model._meta.db_table,
                "update",
                f"UPDATE {sql.table(model)} SET {name} = %s WHERE {where}",
                (new, *where_params),
                rows,
                before_sql=f"SELECT * FROM {sql.table(model)} WHERE {where}",
                before_params=where_params,
            )
        )
    return steps
