"""
The read API: thin views that resolve the metastore, call one selector and serialize what it returns.

Nothing here writes to a metastore (the write guard of ``catalog_admin.db`` would refuse it anyway).
Errors are :class:`~catalog_admin.errors.ApplicationError` s rendered by ``api_exception_handler``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http.response import HttpResponseBase
from django.shortcuts import redirect
from drf_spectacular.settings import spectacular_settings
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param
from rest_framework.views import APIView

from catalog_admin.api.inputs import RejectsNulCharacters
from catalog_admin.api.serializers import (
    ColumnStatisticsPageSerializer,
    DatabaseDetailSerializer,
    DatabaseListSerializer,
    ErrorSerializer,
    MetastoreListSerializer,
    MetastoreSerializer,
    PartitionDetailSerializer,
    PartitionPageSerializer,
    SearchSerializer,
    TableDetailSerializer,
    TablePageSerializer,
)
from catalog_admin.errors import ApplicationError, ErrorCode, metastore_unavailable
from catalog_admin.models import TableType
from catalog_admin.selectors.databases import database_params, get_database, list_databases
from catalog_admin.selectors.metastores import Metastore, get_metastore, metastore_configs, metastore_status
from catalog_admin.selectors.pagination import Page, page_size
from catalog_admin.selectors.partitions import (
    PartitionFilter,
    get_partition_detail,
    list_partitions,
    table_partition_keys,
)
from catalog_admin.selectors.search import MIN_QUERY_LENGTH, search_catalog
from catalog_admin.selectors.tables import TABLE_SORTS, TableFilter, get_table, get_table_detail, list_tables

__all__ = (
    "DatabaseDetailView",
    "DatabaseListView",
    "DocsView",
    "MetastoreDetailView",
    "MetastoreListView",
    "PartitionDetailView",
    "PartitionListView",
    "SchemaView",
    "SearchView",
    "TableColumnStatisticsView",
    "TableDetailView",
    "TableListView",
)


class SchemaView(SpectacularAPIView):
    """The OpenAPI 3 schema (YAML; ``?format=json`` for JSON), for signed-in users and tokens; errors as JSON.

    A browser that navigates here (it asks for ``text/html`` and names no ``format``) is sent to the Swagger UI page
    (``api:docs``), which shows the same schema; tools (and ``?format=yaml|json``) get the document itself.
    """

    permission_classes = [IsAuthenticated]

    @extend_schema(exclude=True)
    def get(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if "format" not in request.query_params and "text/html" in request.headers.get("Accept", ""):
            return redirect("api:docs")
        return super().get(request, *args, **kwargs)

    def handle_exception(self, exc: Exception) -> Response:
        response = super().handle_exception(exc)
        self.request.accepted_renderer = JSONRenderer()
        self.request.accepted_media_type = JSONRenderer.media_type
        return response


class DocsView(SpectacularSwaggerSplitView):
    """
    Swagger UI over :class:`SchemaView`, with every asset from drf-spectacular-sidecar (no internet needed).

    The page is a static shell and public; it fetches the schema with the browser's session. Swagger UI's
    online validator badge (validator.swagger.io) is switched off: it would send the schema URL outside.
    Its start-up script is served by this view too (``?script``), so the page runs no inline script; only
    inline styles (Swagger UI's own) are allowed on top of the console's Content-Security-Policy.
    """

    url_name = "api:schema"

    @extend_schema(exclude=True)
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        response = super().get(request, *args, **kwargs)
        if "settings" in response.data:
            response.data["settings"] = self._dump({**spectacular_settings.SWAGGER_UI_SETTINGS, "validatorUrl": None})
        response.headers["Content-Security-Policy"] = settings.CONTENT_SECURITY_POLICY.replace(
            "style-src 'self'", "style-src 'self' 'unsafe-inline'"
        )
        return response


def _errors(*statuses: int) -> dict[int, OpenApiResponse]:
    descriptions = {
        400: "invalid_parameter: a malformed cursor, page_size or filter.",
        401: "not_authenticated: no or a wrong token or session.",
        404: "not_found: the metastore, database, table or partition does not exist.",
        503: "metastore_unavailable or unsupported_schema_version: the metastore cannot be read.",
    }
    return {status: OpenApiResponse(ErrorSerializer, description=descriptions[status]) for status in statuses}


_METASTORE = OpenApiParameter("metastore", str, OpenApiParameter.PATH, description="Registered metastore name.")
_DATABASE = OpenApiParameter("database", str, OpenApiParameter.PATH, description="Database name.")
_TABLE = OpenApiParameter("table", str, OpenApiParameter.PATH, description="Table or view name.")
_PARTITION = OpenApiParameter(
    "partition_name",
    str,
    OpenApiParameter.PATH,
    description="Partition name as Hive stores it (dt=2024-01-01/hour=3), URL-encoded; '/' may stay literal.",
)
_CURSOR = OpenApiParameter(
    "cursor", str, description="Opaque cursor from next_cursor; omit for the first page.", required=False
)
_PAGE_SIZE = OpenApiParameter(
    "page_size",
    {"type": "integer", "minimum": 1, "maximum": settings.CATALOG_MAX_PAGE_SIZE},
    description=f"Results per page, 1 to {settings.CATALOG_MAX_PAGE_SIZE} (default {settings.CATALOG_PAGE_SIZE}).",
    required=False,
)


class MetastoreAPIView(RejectsNulCharacters, APIView):
    """
    Base of the endpoints that read one metastore.

    :meth:`resolve_metastore` returns the metastore (404 if unknown, 503 if unusable). A connection that
    fails later in the request (the schema version is cached) becomes 503 ``metastore_unavailable`` too.
    """

    metastore: Metastore | None = None

    def resolve_metastore(self, name: str | None) -> Metastore:
        self.metastore = get_metastore(name)
        return self.metastore

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, OperationalError | InterfaceError) and self.metastore is not None:
            exc = metastore_unavailable(exc, self.metastore.name)
        return super().handle_exception(exc)

    def context(self, **extra: Any) -> dict[str, Any]:
        return {"request": self.request, "metastore": self.metastore, **extra}

    def page(self, page: Page, serializer_class: type, **context: Any) -> Response:
        """``{"results", "next", "next_cursor"}`` for a keyset page; ``next`` keeps the other query parameters."""
        next_url = None
        if page.next_cursor:
            next_url = replace_query_param(self.request.build_absolute_uri(), "cursor", page.next_cursor)
        data = {"results": page.items, "next": next_url, "next_cursor": page.next_cursor or None}
        return Response(serializer_class(data, context=self.context(**context)).data)


class MetastoreListView(APIView):
    """Every registered metastore, whether it can be read, its schema version and why not."""

    @extend_schema(
        tags=["metastores"], operation_id="metastores_list", responses={200: MetastoreListSerializer, **_errors(401)}
    )
    def get(self, request: Request) -> Response:
        statuses = [metastore_status(config) for config in metastore_configs()]
        context = {"request": request, "default_metastore": settings.DEFAULT_METASTORE}
        return Response(MetastoreListSerializer({"results": statuses}, context=context).data)


class MetastoreDetailView(MetastoreAPIView):
    @extend_schema(
        tags=["metastores"],
        operation_id="metastores_retrieve",
        parameters=[_METASTORE],
        responses={200: MetastoreSerializer, **_errors(401, 404, 503)},
    )
    def get(self, request: Request, metastore: str) -> Response:
        """One metastore; 503 when it cannot be read."""
        status = metastore_status(self.resolve_metastore(metastore).config)
        context = self.context(default_metastore=settings.DEFAULT_METASTORE)
        return Response(MetastoreSerializer(status, context=context).data)


class DatabaseListView(MetastoreAPIView):
    @extend_schema(
        tags=["databases"],
        operation_id="databases_list",
        parameters=[_METASTORE],
        responses={200: DatabaseListSerializer, **_errors(401, 404, 503)},
    )
    def get(self, request: Request, metastore: str) -> Response:
        """Every database of the metastore, by name, with its table, view and external-table counts."""
        summaries = list_databases(self.resolve_metastore(metastore))
        return Response(DatabaseListSerializer({"results": summaries}, context=self.context()).data)


class DatabaseDetailView(MetastoreAPIView):
    @extend_schema(
        tags=["databases"],
        operation_id="databases_retrieve",
        parameters=[_METASTORE, _DATABASE],
        responses={200: DatabaseDetailSerializer, **_errors(401, 404, 503)},
    )
    def get(self, request: Request, metastore: str, database: str) -> Response:
        """One database with its parameters (DATABASE_PARAMS)."""
        ms = self.resolve_metastore(metastore)
        db = get_database(ms, database)
        data = {"database": db, "params": database_params(ms, db)}
        return Response(DatabaseDetailSerializer(data, context=self.context()).data)


class TableListView(MetastoreAPIView):
    @extend_schema(
        tags=["tables"],
        operation_id="tables_list",
        parameters=[
            _METASTORE,
            _DATABASE,
            OpenApiParameter("q", str, description="Substring of the table name (case-insensitive)."),
            OpenApiParameter("type", str, enum=[t.value for t in TableType], description="Table type."),
            OpenApiParameter("owner", str, description="Exact owner."),
            OpenApiParameter("partitioned", bool, description="Only partitioned (true) or unpartitioned (false)."),
            OpenApiParameter("transactional", bool, description="Only ACID (true) or non-ACID (false) tables."),
            OpenApiParameter("sort", str, enum=list(TABLE_SORTS), default="name", description="Order."),
            _CURSOR,
            _PAGE_SIZE,
        ],
        responses={200: TablePageSerializer, **_errors(400, 401, 404, 503)},
    )
    def get(self, request: Request, metastore: str, database: str) -> Response:
        """One page of the database's tables and views, filtered and sorted (keyset pagination)."""
        params = request.query_params
        filters = TableFilter.from_params(params)
        size = page_size(params.get("page_size"))
        ms = self.resolve_metastore(metastore)
        db = get_database(ms, database)
        with _cursor_checked(params.get("cursor", "")) as cursor:
            page = list_tables(ms, db, filters, cursor=cursor, size=size)
        return self.page(page, TablePageSerializer, database=db)


class TableDetailView(MetastoreAPIView):
    @extend_schema(
        tags=["tables"],
        operation_id="tables_retrieve",
        parameters=[_METASTORE, _DATABASE, _TABLE],
        responses={200: TableDetailSerializer, **_errors(401, 404, 503)},
    )
    def get(self, request: Request, metastore: str, database: str, table: str) -> Response:
        """One table in full: columns, partition keys, storage, parameters, statistics, privileges, ACID state."""
        detail = get_table_detail(self.resolve_metastore(metastore), database, table)
        return Response(TableDetailSerializer(detail, context=self.context()).data)


class TableColumnStatisticsView(MetastoreAPIView):
    @extend_schema(
        tags=["tables"],
        operation_id="tables_column_statistics",
        parameters=[_METASTORE, _DATABASE, _TABLE],
        responses={200: ColumnStatisticsPageSerializer, **_errors(401, 404, 503)},
    )
    def get(self, request: Request, metastore: str, database: str, table: str) -> Response:
        """
        Table-level column statistics (TAB_COL_STATS).

        A partitioned table keeps its statistics per partition: read them from each partition's endpoint.
        """
        detail = get_table_detail(self.resolve_metastore(metastore), database, table)
        return Response(ColumnStatisticsPageSerializer(detail, context=self.context()).data)


class PartitionListView(MetastoreAPIView):
    @extend_schema(
        tags=["partitions"],
        operation_id="partitions_list",
        parameters=[
            _METASTORE,
            _DATABASE,
            _TABLE,
            OpenApiParameter(
                "key.{name}",
                str,
                description="Exact value of the partition key {name}, e.g. key.dt=2024-01-01; one per key.",
            ),
            OpenApiParameter("q", str, description="Substring of the partition name."),
            OpenApiParameter(
                "anomaly",
                str,
                enum=["outside", "missing", "stale"],
                description="Only partitions outside the table's root, missing on disk, or with stale statistics.",
            ),
            _CURSOR,
            _PAGE_SIZE,
        ],
        responses={200: PartitionPageSerializer, **_errors(400, 401, 404, 503)},
    )
    def get(self, request: Request, metastore: str, database: str, table: str) -> Response:
        """One page of the table's partitions in natural key order, with size, freshness and location checks."""
        params = request.query_params
        size = page_size(params.get("page_size"))
        ms = self.resolve_metastore(metastore)
        db, tbl = get_table(ms, database, table)
        keys = table_partition_keys(ms, tbl)
        filters = PartitionFilter.from_params(params, keys)
        with _cursor_checked(params.get("cursor", "")) as cursor:
            page = list_partitions(ms, tbl, keys, filters, cursor=cursor, size=size)
        return self.page(page, PartitionPageSerializer, database=db, table=tbl, partition_keys=keys)


class PartitionDetailView(MetastoreAPIView):
    @extend_schema(
        tags=["partitions"],
        operation_id="partitions_retrieve",
        parameters=[_METASTORE, _DATABASE, _TABLE, _PARTITION],
        responses={200: PartitionDetailSerializer, **_errors(401, 404, 503)},
    )
    def get(self, request: Request, metastore: str, database: str, table: str, partition_name: str) -> Response:
        """One partition: values, location, parameters and column statistics (PART_COL_STATS)."""
        ms = self.resolve_metastore(metastore)
        db, tbl = get_table(ms, database, table)
        detail = get_partition_detail(ms, tbl, partition_name)
        return Response(PartitionDetailSerializer(detail, context=self.context(database=db, table=tbl)).data)


class SearchView(MetastoreAPIView):
    @extend_schema(
        tags=["search"],
        operation_id="search",
        parameters=[
            OpenApiParameter(
                "q",
                # the server counts the characters left after stripping blanks: that many that are not blank
                {
                    "type": "string",
                    "minLength": MIN_QUERY_LENGTH,
                    "pattern": r"\S" + r"[\s\S]*\S" * (MIN_QUERY_LENGTH - 1),
                },
                required=True,
                description=f"At least {MIN_QUERY_LENGTH} characters (not counting surrounding blanks) of a database, "
                "table or column name, a qualified db.table or db.table.column, or a comment.",
            ),
            OpenApiParameter("metastore", str, description="Metastore to search; the default one when omitted."),
        ],
        responses={200: SearchSerializer, **_errors(400, 401, 404, 503)},
    )
    def get(self, request: Request) -> Response:
        """Databases, tables, columns and comments of one metastore matching ``q`` (``sales.orders`` qualified)."""
        ms = self.resolve_metastore(request.query_params.get("metastore") or None)
        results = search_catalog(ms, request.query_params.get("q", ""))
        return Response(SearchSerializer(results, context=self.context()).data)


@contextmanager
def _cursor_checked(cursor: str) -> Iterator[str]:
    """
    Answer 400 for a cursor that decodes but holds values of the wrong type for the sort key.

    ``decode_cursor`` checks the shape (a list of scalars of the key's arity), not the types, so a hand-made
    cursor such as ``[null]`` or ``["x", 1]`` for ``sort=created`` fails while the selector builds its query.
    """
    try:
        yield cursor
    except (ValueError, TypeError) as exc:
        if not cursor:
            raise
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            "The cursor is malformed; start again from the first page.",
            {"parameter": "cursor", "reason": str(exc)},
        ) from exc
