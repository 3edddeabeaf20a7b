"""
The merge API: ``POST /api/merges/preview/`` (what merging databases of one metastore into another would do, nothing
written) and ``POST /api/merges/`` (a draft change request on the target carrying that preview). The request then
goes through the ordinary change-request endpoints (submit, approve, execute, revert).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from catalog_admin.metastores import DEMO_METASTORE_NAME
from operations.api.idempotency import IDEMPOTENCY_KEY_PARAMETER, idempotent
from operations.api.serializers import ChangeRequestSerializer, MergePreviewSerializer
from operations.api.views.base import OperationsAPIView, errors
from operations.merge.changes import merge_change
from operations.merge.workflow import merge_operation, merge_request_from_dict
from operations.services.change_requests import change_request_create

__all__ = ("MergeCreateView", "MergePreviewView")

_MERGE_ERRORS = {
    400: "invalid_parameter: a malformed body (details name the field), source equal to target, a malformed rename "
    "or location rule, or a rename of a database that is not merged.",
    404: "not_found: the source or target metastore, or a named database of the source, does not exist.",
}
_EXAMPLE = OpenApiExample(
    "Two databases of another registered metastore into the demo's, renamed, with a location rule",
    {
        "source": "old_cluster",
        "target": DEMO_METASTORE_NAME,
        "databases": ["sales", "marketing"],
        "renames": {"sales": "sales_legacy"},
        "location_rules": [{"old": "hdfs://old-ns/warehouse", "new": "hdfs://new-ns/warehouse"}],
    },
    request_only=True,
)


class Text(serializers.CharField):
    """A JSON string, as the schema says (DRF's CharField would also take a number and turn it into text)."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class LocationRuleSerializer(serializers.Serializer):
    old = Text(max_length=4000, help_text="A location prefix of the source (at a path boundary).")
    new = Text(max_length=4000, help_text="What it becomes in the target.")


class MergeInputSerializer(serializers.Serializer):
    """What to merge: source and target metastores, databases (all when empty), renames and location rules."""

    source = Text(max_length=64, help_text="Registered metastore to import from.")
    target = Text(max_length=64, help_text="Registered metastore to import into.")
    databases = serializers.ListField(
        child=Text(max_length=128), required=False, default=list,
        help_text="Source databases to import; all of them when empty.",
    )  # fmt: skip
    renames = serializers.DictField(
        child=Text(max_length=128), required=False, default=dict,
        help_text="src_db → new_name in the target.",
    )  # fmt: skip
    location_rules = LocationRuleSerializer(many=True, required=False, default=list)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        return {"request": merge_request_from_dict(attrs), "reason": attrs.get("reason", "")}


class MergeCreateSerializer(MergeInputSerializer):
    reason = Text(required=False, allow_blank=True, default="", help_text="Why (for approvers).")


class MergePreviewView(OperationsAPIView):
    @extend_schema(
        tags=["merges"],
        operation_id="merges_preview",
        request=MergeInputSerializer,
        responses={200: MergePreviewSerializer, **errors(400, 401, 404, 415, 503, overrides=_MERGE_ERRORS)},
        examples=[_EXAMPLE],
    )
    def post(self, request: Request) -> Response:
        """What the merge would do, read from both metastores; nothing is written (anyone signed in)."""
        merge = self.validated(MergeInputSerializer)["request"]
        return Response(merge_change(merge).as_dict())


class MergeCreateView(OperationsAPIView):
    @extend_schema(
        tags=["merges"],
        operation_id="merges_create",
        parameters=[IDEMPOTENCY_KEY_PARAMETER],
        request=MergeCreateSerializer,
        responses={
            201: ChangeRequestSerializer,
            **errors(400, 401, 403, 404, 415, 422, 503, overrides=_MERGE_ERRORS),
        },
        examples=[_EXAMPLE],
    )
    @idempotent
    def post(self, request: Request) -> Response:
        """A draft change request on the target metastore carrying the merge preview (stewards); risk high.

        Blockers are shown in the preview; they refuse the request at submit. Then submit, approve, execute and
        revert it through the change-request endpoints."""
        data = self.validated(MergeCreateSerializer)
        operation = merge_operation(data["request"])
        change = change_request_create(user=request.user, operation=operation, reason=data["reason"])
        return self.change_request(change, status=201)
