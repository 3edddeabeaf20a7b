"""
The read API's views of a table's data: a sample of its rows, its SHOW CREATE TABLE, and the chart series of its
partitions. Thin, like ``catalog_admin.api.views``: resolve, call one selector, return JSON.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from catalog_admin.api.serializers import ErrorSerializer
from catalog_admin.api.views import _DATABASE, _METASTORE, _TABLE, MetastoreAPIView, _errors
from catalog_admin.selectors.partition_charts import file_size_histogram, partitions_by_key
from catalog_admin.selectors.partitions import get_partition, table_partition_keys
from catalog_admin.selectors.samples import MAX_SAMPLE_ROWS, sample_limit, table_sample
from catalog_admin.selectors.table_ddl import show_create_statement
from catalog_admin.selectors.tables import get_table, get_table_detail

__all__ = ("PartitionChartsView", "ShowCreateTableView", "TableSampleView")

_DATA_ERRORS = {
    404: OpenApiResponse(
        ErrorSerializer,
        description="not_found (metastore, database, table or partition) or no_data_files: no data file to read.",
    ),
    422: OpenApiResponse(
        ErrorSerializer,
        description="unreadable_data: a format the console cannot read, or a file that is not it; outside_roots: a "
        "location outside the governed roots; symlink_refused: a symbolic link in the data (never followed).",
    ),
}

_SampleSerializer = inline_serializer(
    "TableSample",
    {
        "columns": serializers.ListField(
            child=serializers.CharField(), help_text="Table columns, then partition keys."
        ),
        "rows": serializers.ListField(child=serializers.ListField(child=serializers.JSONField(allow_null=True))),
        "files_read": serializers.IntegerField(),
        "truncated": serializers.BooleanField(help_text="The limit was reached: more rows may exist."),
    },
)
_ChartSerializer = inline_serializer(
    "Chart",
    {
        "title": serializers.CharField(),
        "x_label": serializers.CharField(allow_blank=True),
        "labels": serializers.ListField(child=serializers.CharField(allow_blank=True)),
        "series": serializers.DictField(child=serializers.ListField(child=serializers.IntegerField())),
        "truncated": serializers.BooleanField(),
    },
)


class TableSampleView(MetastoreAPIView):
    @extend_schema(
        tags=["tables"],
        operation_id="tables_sample",
        parameters=[
            _METASTORE,
            _DATABASE,
            _TABLE,
            OpenApiParameter(
                "limit",
                {"type": "integer", "minimum": 1, "maximum": MAX_SAMPLE_ROWS},
                description=f"Rows to read, 1 to {MAX_SAMPLE_ROWS} (default 20).",
            ),
            OpenApiParameter("partition", str, description="A partition name (dt=2024-01-01/hour=3) to read only it."),
        ],
        responses={200: _SampleSerializer, **_errors(400, 401, 503), **_DATA_ERRORS},
    )
    def get(self, request: Request, metastore: str, database: str, table: str) -> Response:
        """The first rows of the table (or of one partition) read from its data files, bounded in rows and bytes."""
        limit = sample_limit(request.query_params.get("limit"))
        current = self.resolve_metastore(metastore)
        _db, found = get_table(current, database, table)
        name = request.query_params.get("partition", "")
        partition = get_partition(current, found, name) if name else None
        sample = table_sample(current, found, table_partition_keys(current, found), limit=limit, partition=partition)
        return Response(
            {
                "columns": sample.columns,
                "rows": sample.rows,
                "files_read": sample.files_read,
                "truncated": sample.truncated,
            }
        )


class ShowCreateTableView(MetastoreAPIView):
    @extend_schema(
        tags=["tables"],
        operation_id="tables_show_create",
        parameters=[_METASTORE, _DATABASE, _TABLE],
        responses={
            200: inline_serializer("ShowCreateTable", {"statement": serializers.CharField()}),
            **_errors(401, 404, 503),
        },
    )
    def get(self, request: Request, metastore: str, database: str, table: str) -> Response:
        """SHOW CREATE TABLE as the metastore's Hive version prints it."""
        current = self.resolve_metastore(metastore)
        return Response({"statement": show_create_statement(current, get_table_detail(current, database, table))})


class PartitionChartsView(MetastoreAPIView):
    @extend_schema(
        tags=["partitions"],
        operation_id="partitions_charts",
        parameters=[_METASTORE, _DATABASE, _TABLE],
        responses={
            200: inline_serializer(
                "PartitionCharts",
                {
                    "partitions_per_day": _ChartSerializer,
                    "bytes_per_key": _ChartSerializer,
                    "file_sizes": _ChartSerializer,
                },
            ),
            **_errors(401, 404, 503),
        },
    )
    def get(self, request: Request, metastore: str, database: str, table: str) -> Response:
        """The partition charts: partitions and bytes per day-key value, and the small-file histogram."""
        current = self.resolve_metastore(metastore)
        _db, found = get_table(current, database, table)
        per_day, size = partitions_by_key(current, found, table_partition_keys(current, found))
        return Response(
            {
                "partitions_per_day": per_day.as_dict(),
                "bytes_per_key": size.as_dict(),
                "file_sizes": file_size_histogram(current, found).as_dict(),
            }
        )
