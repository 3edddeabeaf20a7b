"""
The ACID delta counts chart of a transactional table: per partition directory, the deltas and delete deltas a reader
applies after the base (``AcidUtils.getAcidState``, stacked, against the Initiator's delta-count threshold from
``Initiator.determineCompactionType``), and the obsolete and aborted directories the cleaner has yet to remove.

Bounded: the first :data:`MAX_CHARTED` partitions by name (one keyset page of
:func:`catalog_admin.selectors.acid.partition_reports`, so at most that many directories are listed).
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog_admin.models import Table
from catalog_admin.selectors.acid import DirectoryReport, partition_reports, table_thresholds
from catalog_admin.selectors.metastores import Metastore
from catalog_admin.selectors.partition_charts import Chart

__all__ = ("MAX_CHARTED", "AcidCharts", "StackedChart", "acid_delta_charts")

MAX_CHARTED = 100
TABLE_LABEL = "(table)"


@dataclass(frozen=True)
class StackedChart(Chart):
    """A chart whose series are stacked in each bar, with an optional threshold line and a note on which bars."""

    threshold: int | None = None
    threshold_label: str = ""
    subset: str = ""

    def as_dict(self) -> dict[str, object]:
        threshold = {"value": self.threshold, "label": self.threshold_label} if self.threshold is not None else None
        return super().as_dict() | {"stacked": True, "threshold": threshold, "subset": self.subset}


@dataclass(frozen=True)
class AcidCharts:
    """Both charts over the same directories; ``unlisted``: directories that could not be listed (drawn as 0)."""

    delta_counts: StackedChart
    obsolete_aborted: StackedChart
    charted: int
    unlisted: int
    truncated: bool

    def as_dict(self) -> dict[str, object]:
        return {
            "delta_counts": self.delta_counts.as_dict(),
            "obsolete_aborted": self.obsolete_aborted.as_dict(),
            "charted": self.charted,
            "unlisted": self.unlisted,
            "truncated": self.truncated,
        }


def acid_delta_charts(metastore: Metastore, database: str, table: Table) -> AcidCharts:
    """The table's first :data:`MAX_CHARTED` partition directories (or its own directory) charted."""
    page = partition_reports(metastore, database, table, size=MAX_CHARTED)
    reports: list[DirectoryReport] = list(page.items)
    truncated = bool(page.next_cursor)
    subset = f"the first {len(reports)} partitions by name" if truncated else ""
    labels = [r.partition or TABLE_LABEL for r in reports]
    limit = table_thresholds(metastore, table.id).delta_num
    deltas = StackedChart(
        "Deltas after the base",
        "partition",
        labels,
        {
            "deltas": [len(r.state.deltas) if r.state else 0 for r in reports],
            "delete deltas": [len(r.state.delete_deltas) if r.state else 0 for r in reports],
        },
        truncated,
        threshold=limit,
        threshold_label=f"compaction above {limit}",
        subset=subset,
    )
    cleanup = StackedChart(
        "Directories to clean",
        "partition",
        labels,
        {
            "obsolete": [len(r.state.obsolete) if r.state else 0 for r in reports],
            "aborted": [len(r.state.aborted) if r.state else 0 for r in reports],
        },
        truncated,
        subset=subset,
    )
    unlisted = sum(1 for r in reports if not r.listed)
    return AcidCharts(deltas, cleanup, len(reports), unlisted, truncated)
