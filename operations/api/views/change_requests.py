"""Change requests: the list (and creating one), one request (and editing it), its data scope, approvals, comments."""

from __future__ import annotations

from django.db.models import prefetch_related_objects
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema, inline_serializer
from rest_framework.request import Request
from rest_framework.response import Response

from catalog_admin.api.data_views import _ChartSerializer
from catalog_admin.errors import NotFound
from catalog_admin.metastores import DEMO_METASTORE_NAME
from catalog_admin.selectors.pagination import page_size
from operations.api.idempotency import IDEMPOTENCY_KEY_PARAMETER, idempotent
from operations.api.serializers import (
    RISKS,
    ApprovalListSerializer,
    ChangeRequestCreateSerializer,
    ChangeRequestPageSerializer,
    ChangeRequestSerializer,
    ChangeRequestUpdateSerializer,
    CommentCreateSerializer,
    CommentListSerializer,
    CommentSerializer,
)
from operations.api.views.base import (
    CREATE_ERRORS,
    CURSOR,
    PAGE_SIZE,
    PK,
    OperationsAPIView,
    command_schema,
    errors,
)
from operations.choices import ChangeRequestState
from operations.selectors import ChangeRequestFilter, get_change_request, list_change_requests
from operations.services.change_requests import change_request_comment, change_request_create, change_request_update

__all__ = (
    "ChangeRequestApprovalsView",
    "ChangeRequestCommentsView",
    "ChangeRequestDataScopeChartsView",
    "ChangeRequestDetailView",
    "ChangeRequestListView",
)


class ChangeRequestListView(OperationsAPIView):
    @extend_schema(
        tags=["change-requests"],
        operation_id="change_requests_list",
        parameters=[
            # An empty filter means "any", as from a form (schemathesis: `?state=` was answered, though undeclared).
            OpenApiParameter(
                "state", str, enum=["", *ChangeRequestState.values], description="Only this state (empty: any)."
            ),
            OpenApiParameter("metastore", str, description="Only requests on this metastore."),
            OpenApiParameter("database", str, description="Only requests on tables of this database (exact)."),
            OpenApiParameter("table", str, description="Substring of the table name."),
            OpenApiParameter("requester", str, description="Only requests of this user (username)."),
            OpenApiParameter("risk", str, enum=["", *RISKS], description="Only this risk (empty: any)."),
            CURSOR,
            PAGE_SIZE,
        ],
        responses={200: ChangeRequestPageSerializer, **errors(400, 401)},
    )
    def get(self, request: Request) -> Response:
        """Change requests, newest first, filtered (keyset pages)."""
        params = request.query_params
        filters = ChangeRequestFilter.from_params(params)
        page = list_change_requests(filters, cursor=params.get("cursor", ""), size=page_size(params.get("page_size")))
        prefetch_related_objects(page.items, "jobs", "execution")
        return self.page(page, ChangeRequestPageSerializer)

    @extend_schema(
        tags=["change-requests"],
        operation_id="change_requests_create",
        parameters=[IDEMPOTENCY_KEY_PARAMETER],
        request=ChangeRequestCreateSerializer,
        responses={
            201: ChangeRequestSerializer,
            **errors(400, 401, 403, 404, 415, 422, 503, overrides=CREATE_ERRORS),
        },
        examples=[
            OpenApiExample(
                "Hive DDL",
                {"statement": "ALTER TABLE sales.orders RENAME TO sales.orders_v2", "reason": "naming convention"},
                request_only=True,
            ),
            OpenApiExample(
                "Structured",
                {
                    "metastore": DEMO_METASTORE_NAME,
                    "operation": {
                        "kind": "rename_table",
                        "target": {"database": "sales", "table": "orders"},
                        "new": {"database": "sales", "table": "orders_v2"},
                    },
                },
                request_only=True,
            ),
        ],
    )
    @idempotent
    def post(self, request: Request) -> Response:
        """
        A draft change request with its preview, from a Hive statement or a structured operation (stewards).

        Blockers are shown in the preview; they refuse the request at submit.
        """
        change = change_request_create(user=request.user, **self.validated(ChangeRequestCreateSerializer))
        return self.change_request(change, status=201)


class ChangeRequestDetailView(OperationsAPIView):
    @extend_schema(
        tags=["change-requests"],
        operation_id="change_requests_retrieve",
        parameters=[PK],
        responses={200: ChangeRequestSerializer, **errors(401, 404)},
    )
    def get(self, request: Request, pk: int) -> Response:
        """One change request with its preview, policy, execution and latest job."""
        return self.change_request(get_change_request(pk))

    @extend_schema(
        tags=["change-requests"],
        operation_id="change_requests_partial_update",
        parameters=[PK, IDEMPOTENCY_KEY_PARAMETER],
        request=ChangeRequestUpdateSerializer,
        responses={
            200: ChangeRequestSerializer,
            **errors(400, 401, 403, 404, 409, 415, 422, 503, overrides=CREATE_ERRORS),
        },
    )
    @idempotent
    def patch(self, request: Request, pk: int) -> Response:
        """Edit a draft (the requester): a new statement or operation and a new preview, or a new reason."""
        change = get_change_request(pk)
        data = self.validated(ChangeRequestUpdateSerializer, change=change)
        return self.change_request(change_request_update(request=change, user=request.user, **data))


class ChangeRequestDataScopeChartsView(OperationsAPIView):
    @extend_schema(
        tags=["change-requests"],
        operation_id="change_requests_data_scope_charts",
        parameters=[PK],
        responses={200: inline_serializer("DataScopeCharts", {"file_sizes": _ChartSerializer}), **errors(401, 404)},
    )
    def get(self, request: Request, pk: int) -> Response:
        """The small-file histogram of the data a request's job copies or rewrites (its stored preview's listing)."""
        change = get_change_request(pk)
        scope = (change.preview.get("data_copy") or {}).get("scope")
        if not scope:
            raise NotFound("data scope of change request", str(pk))
        return Response({"file_sizes": scope["file_sizes"]})


class ChangeRequestApprovalsView(OperationsAPIView):
    @extend_schema(
        tags=["change-requests"],
        operation_id="change_requests_approvals_list",
        parameters=[PK],
        responses={200: ApprovalListSerializer, **errors(401, 404)},
    )
    def get(self, request: Request, pk: int) -> Response:
        """The decisions on a request, oldest first (approvals on an older preview have current false)."""
        change = get_change_request(pk)
        data = {"results": list(change.approvals.all())}
        return Response(ApprovalListSerializer(data, context=self.context(change=change)).data)


class ChangeRequestCommentsView(OperationsAPIView):
    @extend_schema(
        tags=["change-requests"],
        operation_id="change_requests_comments_list",
        parameters=[PK],
        responses={200: CommentListSerializer, **errors(401, 404)},
    )
    def get(self, request: Request, pk: int) -> Response:
        """The comments on a request, oldest first."""
        change = get_change_request(pk)
        return Response(CommentListSerializer({"results": list(change.comments.all())}, context=self.context()).data)

    @command_schema(
        "change_requests_comments_create",
        "Comment on a request",
        CommentCreateSerializer,
        {
            201: CommentSerializer,
            **errors(400, 401, 404, 422, overrides={400: "invalid_parameter: the comment is empty."}),
        },
    )
    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        data = self.validated(CommentCreateSerializer)
        comment = change_request_comment(request=get_change_request(pk), user=request.user, **data)
        return Response(CommentSerializer(comment, context=self.context()).data, status=201)
