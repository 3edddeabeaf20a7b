"""Read API of transactional tables' directories: ``getAcidState`` per table or partition, and the metastore's
partitions that Hive's Initiator would compact."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param

from catalog_admin.api.serializers import AcidDirectoryPageSerializer, CompactionNeedListSerializer
from catalog_admin.api.views import (
    _CURSOR,
    _DATABASE,
    _METASTORE,
    _PAGE_SIZE,
    _TABLE,
    MetastoreAPIView,
    _cursor_checked,
    _errors,
)
from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.hive.acid import AcidDirectoryState
from catalog_admin.selectors.acid import (
    DirectoryReport,
    compaction_queue,
    partition_reports,
    valid_txn_list,
    valid_write_ids,
    worst_partitions,
)
from catalog_admin.selectors.acid_charts import acid_delta_charts
from catalog_admin.selectors.pagination import page_size
from catalog_admin.selectors.tables import get_table

__all__ = ("AcidDeltaChartsView", "AcidDirectoryListView", "CompactionNeedListView", "report_data")


def report_data(report: DirectoryReport) -> dict[str, Any]:
    """A directory report as the serializers read it (the state's ``current`` and the need's ``needed`` spelled out)."""
    state: AcidDirectoryState | None = report.state
    need = report.need
    return {
        "partition": report.partition,
        "location": report.location,
        "listed": report.listed,
        "state": asdict(state) if state else None,
        "need": {**asdict(need), "needed": need.needed} if need else None,
    }


class AcidDirectoryListView(MetastoreAPIView):
    @extend_schema(
        tags=["tables"],
        operation_id="acid_directories_list",
        parameters=[_METASTORE, _DATABASE, _TABLE, _CURSOR, _PAGE_SIZE],
        responses={200: AcidDirectoryPageSerializer, **_errors(400, 401, 404, 503)},
    )
    def get(self, request: Request, metastore: str, database: str, table: str) -> Response:
        """A transactional table's directories as Hive's readers see them (``AcidUtils.getAcidState``), one per
        partition (keyset-paged by name), with the Initiator's verdict and the table's compaction queue."""
        size = page_size(request.query_params.get("page_size"))
        ms = self.resolve_metastore(metastore)
        db, tbl = get_table(ms, database, table)
        with _cursor_checked(request.query_params.get("cursor", "")) as cursor:
            page = partition_reports(ms, db.name, tbl, cursor=cursor, size=size)
        queue = compaction_queue(ms, db.name, tbl.name)
        next_url = None
        if page.next_cursor:
            next_url = replace_query_param(request.build_absolute_uri(), "cursor", page.next_cursor)
        data = {
            "write_ids": str(valid_write_ids(ms, db.name, tbl.name, valid_txn_list(ms))),
            "compaction_queue": queue["queue"],
            "completed_compactions": queue["completed"],
            "results": [report_data(r) for r in page.items],
            "next": next_url,
            "next_cursor": page.next_cursor or None,
        }
        return Response(AcidDirectoryPageSerializer(data, context=self.context()).data)


_StackedChartSerializer = inline_serializer(
    "StackedChart",
    {
        "title": serializers.CharField(),
        "x_label": serializers.CharField(allow_blank=True),
        "labels": serializers.ListField(child=serializers.CharField(), help_text="Partition names, or (table)."),
        "series": serializers.DictField(child=serializers.ListField(child=serializers.IntegerField())),
        "truncated": serializers.BooleanField(),
        "stacked": serializers.BooleanField(),
        "threshold": inline_serializer(
            "ChartThreshold",
            {"value": serializers.IntegerField(), "label": serializers.CharField()},
            allow_null=True,
        ),
        "subset": serializers.CharField(allow_blank=True, help_text="Which partitions, when not all are charted."),
    },
)


class AcidDeltaChartsView(MetastoreAPIView):
    @extend_schema(
        tags=["tables"],
        operation_id="acid_delta_charts",
        parameters=[_METASTORE, _DATABASE, _TABLE],
        responses={
            200: inline_serializer(
                "AcidDeltaCharts",
                {
                    "delta_counts": _StackedChartSerializer,
                    "obsolete_aborted": _StackedChartSerializer,
                    "charted": serializers.IntegerField(),
                    "unlisted": serializers.IntegerField(help_text="Directories that could not be listed (0 bars)."),
                    "truncated": serializers.BooleanField(),
                },
            ),
            **_errors(401, 404, 503),
        },
    )
    def get(self, request: Request, metastore: str, database: str, table: str) -> Response:
        """Per partition directory (the first 100 by name, ``MAX_CHARTED``): the deltas and delete deltas after the base
        against the Initiator's delta-count threshold, and the obsolete and aborted directories."""
        ms = self.resolve_metastore(metastore)
        db, tbl = get_table(ms, database, table)
        return Response(acid_delta_charts(ms, db.name, tbl).as_dict())


class CompactionNeedListView(MetastoreAPIView):
    @extend_schema(
        tags=["metastores"],
        operation_id="compaction_needs_list",
        parameters=[
            _METASTORE,
            OpenApiParameter("limit", {"type": "integer", "minimum": 1, "maximum": 500}, description="At most (50)."),
        ],
        responses={200: CompactionNeedListSerializer, **_errors(400, 401, 404, 503)},
    )
    def get(self, request: Request, metastore: str) -> Response:
        """The transactional directories Hive's Initiator would compact, worst first (bounded scan)."""
        ms = self.resolve_metastore(metastore)
        limit = _limit(request.query_params.get("limit"))
        rows = [
            {"database": n.database, "table": n.table, "report": report_data(n.report)}
            for n in worst_partitions(ms, limit=limit)
        ]
        return Response(CompactionNeedListSerializer({"results": rows}, context=self.context()).data)


def _limit(raw: str | None) -> int:
    if raw in (None, ""):
        return 50
    if not str(raw).isdigit() or not 1 <= int(raw) <= 500:
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            f"limit must be an integer between 1 and 500, not '{raw}'.",
            {"parameter": "limit"},
        )
    return int(raw)
