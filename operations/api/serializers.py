"""
Serializers of the change-request API: the bodies it accepts (turned into service arguments) and what it returns.

Input serializers only shape and type-check the body; the services decide everything else (permissions, states,
Hive rules) and refuse with the shared error vocabulary. A Hive statement is parsed here (``ddl_parse_error``
with its position), and a structured operation is checked by rendering it as Hive DDL and parsing that back.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers
from rest_framework.reverse import reverse

from catalog_admin.errors import ApplicationError, ErrorCode
from operations.choices import ChangeRequestState, Decision, JobState
from operations.ddl.parser import DdlParseError, parse_alter
from operations.models import Approval, AuditRecord, ChangeRequest, Execution, Job
from operations.risk import LEVELS
from operations.selectors import change_request_actions
from operations.specs import SPEC_KINDS, AlterSpec, spec_from_dict

__all__ = (
    "ActionSerializer",
    "ApprovalListSerializer",
    "ApprovalSerializer",
    "ApproveSerializer",
    "AuditExportRowSerializer",
    "AuditExportSerializer",
    "AuditPageSerializer",
    "AuditRecordSerializer",
    "ChangeRequestCreateSerializer",
    "ChangeRequestPageSerializer",
    "ChangeRequestRowSerializer",
    "ChangeRequestSerializer",
    "ChangeRequestUpdateSerializer",
    "CommentCreateSerializer",
    "CommentListSerializer",
    "CommentSerializer",
    "ExecuteSerializer",
    "JobSerializer",
    "MergePreviewSerializer",
    "PreviewSerializer",
    "RejectSerializer",
    "RevertSerializer",
    "SettleSerializer",
    "spec_from_operation",
)

NAMESPACE = "operations_api"
RISKS = LEVELS  # the one risk model (operations.risk)

_TABLE_REF = {
    "type": "object",
    "required": ["database", "table"],
    "properties": {"database": {"type": "string"}, "table": {"type": "string"}},
}
_OPERATION_EXAMPLE = {
    "kind": "rename_table",
    "target": {"database": "sales", "table": "orders"},
    "new": {"database": "sales", "table": "orders_v2"},
}


def _operation_schema(kinds: list[str], description: str) -> dict[str, Any]:
    return {
        "type": "object",
        "description": description,
        "required": ["kind", "target"],
        "properties": {"kind": {"type": "string", "enum": kinds}, "target": _TABLE_REF},
        "additionalProperties": True,
        "example": _OPERATION_EXAMPLE,
    }


def _link(name: str, context: dict[str, Any], **kwargs: Any) -> str:
    return reverse(f"{NAMESPACE}:{name}", kwargs=kwargs, request=context.get("request"))


# Inputs ---------------------------------------------------------------------------------------------------------


@extend_schema_field(
    _operation_schema(
        list(SPEC_KINDS),
        "A structured ALTER: its kind, its target table and the kind's own fields, shaped like the `operation` of "
        "a change request (e.g. rename_table: `new`; add_columns: `columns` [{name, type, comment}], `cascade`; "
        "set_tblproperties: `properties` [[key, value], …]; drop_partitions: `specs` [[{key, op, value}, …], …]).",
    )
)
class OperationInputField(serializers.JSONField):
    """A structured operation as JSON (checked by :func:`spec_from_operation`)."""


def spec_from_operation(operation: Any) -> AlterSpec:
    """
    The spec of a structured operation, checked by rendering it as Hive DDL and parsing that back.

    The round trip gives the operation exactly the types a typed statement would have, and refuses what no
    supported statement can express; every refusal is ``invalid_parameter`` naming ``operation``.
    """
    supported = list(SPEC_KINDS)
    if not isinstance(operation, dict) or operation.get("kind") not in SPEC_KINDS:
        kind = operation.get("kind") if isinstance(operation, dict) else None
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            f"operation must be an object whose kind is one of {', '.join(supported)}, not {kind!r}.",
            {"parameter": "operation", "supported": supported},
        )
    if _holds_nul(operation):
        reason = "it holds a NUL (0x00) character"
    else:
        try:
            statement = spec_from_dict(operation).to_ddl()
            return parse_alter(statement)
        except DdlParseError as exc:
            reason = exc.message
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            reason = f"{type(exc).__name__}: {exc}"
    raise ApplicationError(
        ErrorCode.INVALID_PARAMETER,
        f"operation is not a valid {operation['kind']} operation ({reason}).",
        {"parameter": "operation", "kind": operation["kind"], "reason": reason},
    )


def _holds_nul(value: Any) -> bool:
    """Whether any key or string of a JSON value holds a NUL character (PostgreSQL cannot compare one)."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_holds_nul(key) or _holds_nul(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_holds_nul(item) for item in value)
    return False


class _SpecInputSerializer(serializers.Serializer):
    statement = serializers.CharField(
        required=False, help_text="One Hive ALTER TABLE statement, as typed in Beeline (or give `operation`)."
    )
    operation = OperationInputField(required=False)
    reason = serializers.CharField(required=False, allow_blank=True, help_text="Why the change is needed.")

    def spec(self, attrs: dict[str, Any], *, required: bool) -> AlterSpec | None:
        """The statement's or the operation's spec; exactly one of them (or, when not ``required``, neither)."""
        given = [name for name in ("statement", "operation") if attrs.get(name) not in (None, "")]
        if len(given) > 1 or (required and not given):
            raise ApplicationError(
                ErrorCode.INVALID_PARAMETER,
                "Give either statement (Hive DDL) or operation (structured), "
                + ("not both." if given else "one of them."),
                {"parameter": "statement" if not given else "operation"},
            )
        if not given:
            return None
        if given == ["statement"]:
            return parse_alter(attrs["statement"])
        return spec_from_operation(attrs["operation"])


class ChangeRequestCreateSerializer(_SpecInputSerializer):
    """A new draft: a statement or an operation, on a metastore (the default one when omitted)."""

    metastore = serializers.CharField(
        required=False, allow_blank=True, help_text="Registered metastore name; the default metastore when omitted."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        return {
            "spec": self.spec(attrs, required=True),
            "metastore": attrs.get("metastore") or None,
            "reason": attrs.get("reason", ""),
        }


class ChangeRequestUpdateSerializer(_SpecInputSerializer):
    """Edit a draft: a new statement or operation, a new reason, or both (what is omitted stays)."""

    metastore = serializers.CharField(
        required=False, help_text="Must be the request's own metastore: a request stays on its metastore."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        return {
            "spec": self.spec(attrs, required=False),
            "reason": attrs.get("reason"),
            "metastore": attrs.get("metastore"),
        }


class ApproveSerializer(serializers.Serializer):
    comment = serializers.CharField(required=False, allow_blank=True, default="", help_text="Optional remark.")


class RejectSerializer(serializers.Serializer):
    comment = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="Why the change is rejected (required)."
    )


class ExecuteSerializer(serializers.Serializer):
    at = serializers.DateTimeField(
        required=False,
        allow_null=True,
        default=None,
        help_text="ISO 8601 time to run at (scheduled); omitted or null: execute now as a background job.",
    )


class SettleSerializer(serializers.Serializer):
    outcome = serializers.ChoiceField(
        choices=["succeeded", "failed"], help_text="How the stuck execution ended (check the metastore first)."
    )
    reason = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="Why it is settled so (required; audited)."
    )


class RevertSerializer(serializers.Serializer):
    reason = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="Why; 'Revert of #<id>' when omitted."
    )


class CommentCreateSerializer(serializers.Serializer):
    body = serializers.CharField(allow_blank=True, trim_whitespace=False, help_text="The remark (not empty).")


# Outputs --------------------------------------------------------------------------------------------------------


class PreviewDiffSerializer(serializers.Serializer):
    field = serializers.CharField()
    before = serializers.JSONField(allow_null=True)
    after = serializers.JSONField(allow_null=True)


class PreviewRowChangeSerializer(serializers.Serializer):
    table = serializers.CharField(help_text="Metastore table (TBLS, PARTITIONS …).")
    inserted = serializers.IntegerField()
    updated = serializers.IntegerField()
    deleted = serializers.IntegerField()


class PreviewMoveSerializer(serializers.Serializer):
    source = serializers.CharField()
    destination = serializers.CharField()
    partitions_moving = serializers.IntegerField()
    partitions_staying = serializers.IntegerField()
    files = serializers.IntegerField(allow_null=True)
    bytes = serializers.IntegerField(allow_null=True)
    source_exists = serializers.BooleanField(allow_null=True)
    destination_free = serializers.BooleanField(allow_null=True)
    same_filesystem = serializers.BooleanField()


class PreviewFindingSerializer(serializers.Serializer):
    code = serializers.CharField()
    rule = serializers.CharField(help_text="The Hive rule's number.")
    message = serializers.CharField()
    severity = serializers.ChoiceField(choices=["blocker", "warning"])


class PreviewHiveSerializer(serializers.Serializer):
    version = serializers.CharField()
    partition_round_trips = serializers.IntegerField()
    statistics_deleted = serializers.IntegerField()
    estimated_seconds = serializers.FloatField()
    notes = serializers.ListField(child=serializers.CharField())


class PreviewEventsSerializer(serializers.Serializer):
    counts = serializers.DictField(child=serializers.IntegerField(), help_text="Events per type (ALTER_TABLE …).")
    total = serializers.IntegerField()
    message_format = serializers.CharField(help_text="json-0.2 (Hive 2.3, 3.1) or gzip(json-2.0) (Hive 4.0).")
    partitions = serializers.DictField(allow_null=True, help_text="Which partitions the partition events describe.")


class PreviewStepSerializer(serializers.Serializer):
    description = serializers.CharField()
    table = serializers.CharField()
    action = serializers.ChoiceField(choices=["insert", "update", "delete"])
    expected_rows = serializers.IntegerField(help_text="-1: not checked (id bookkeeping).")


class PreviewCriterionSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="The criterion's name, as the approval policy's rules name it.")
    level = serializers.CharField(help_text="low, medium or high (the preview's risk is the highest level).")
    label = serializers.CharField()
    explanation = serializers.CharField(help_text="Why it fired, with the plan's own numbers and names.")


class AffectedPartitionSerializer(serializers.Serializer):
    name = serializers.CharField()
    location = serializers.CharField(allow_null=True)
    rows = serializers.IntegerField(allow_null=True, help_text="numRows, when the partition has statistics.")
    bytes = serializers.IntegerField(allow_null=True, help_text="Files on disk when measured, else totalSize.")
    files = serializers.IntegerField(allow_null=True)
    fate = serializers.CharField(help_text="What happens to its data.")
    new_name = serializers.CharField(help_text="A renamed partition's new name (empty for a drop).")


class PartitionsAffectedSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=["dropped", "renamed"])
    count = serializers.IntegerField(help_text="Every affected partition.")
    rows = serializers.IntegerField(allow_null=True, help_text="Sum of numRows over all of them.")
    bytes = serializers.IntegerField(allow_null=True)
    listed = AffectedPartitionSerializer(many=True, help_text="The first ones by name (a bounded list).")
    more = serializers.IntegerField(help_text="How many are not listed.")
    data = serializers.CharField(help_text="What the console does with their data.")
    hive_data = serializers.CharField(help_text="What Hive would do with it (trash, PURGE, auto.purge).")


class PreviewSerializer(serializers.Serializer):
    """What the change will do (documentation of the stored preview summary; rendered as stored)."""

    metastore = serializers.CharField()
    schema_version = serializers.CharField()
    operation = serializers.DictField()
    statement = serializers.CharField()
    fingerprint = serializers.CharField(help_text="What the preview read; approval and execution need it unchanged.")
    risk = serializers.ChoiceField(choices=RISKS, help_text="The highest level among the criteria that fired.")
    criteria = PreviewCriterionSerializer(many=True, required=False, help_text="The risk criteria that fired.")
    affected = PartitionsAffectedSerializer(
        required=False, allow_null=True, help_text="The partitions a DROP PARTITION or partition rename affects."
    )
    executable = serializers.BooleanField(help_text="False when a Hive rule blocks the change (see blockers).")
    diff = PreviewDiffSerializer(many=True, help_text="The table's fields before and after.")
    row_changes = PreviewRowChangeSerializer(many=True, help_text="Expected rows per metastore table.")
    moves = PreviewMoveSerializer(many=True, help_text="Data directories that move.")
    blockers = PreviewFindingSerializer(many=True, help_text="The first blockers of each code (a bounded list).")
    blocker_counts = serializers.DictField(
        child=serializers.IntegerField(), required=False, help_text="Every blocker code's total, listed or not."
    )
    blockers_digest = serializers.CharField(required=False, help_text="A digest of every blocker (listed or not).")
    warnings = PreviewFindingSerializer(many=True, help_text="The first warnings of each code (a bounded list).")
    warning_counts = serializers.DictField(
        child=serializers.IntegerField(), required=False, help_text="Every warning code's total, listed or not."
    )
    partitions_touched = serializers.IntegerField()
    statistics_moved = serializers.IntegerField()
    statistics_dropped = serializers.IntegerField()
    hive = PreviewHiveSerializer(help_text="What Hive itself would do.")
    events = PreviewEventsSerializer(
        allow_null=True, help_text="Notification events execution writes (null: events off or nothing runs)."
    )
    estimated_seconds = serializers.FloatField()
    databases = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Every database the plan changes, where it names them (an abort: its table's and every one its "
        "transactions wrote to or locked); an approver's scope must cover them all.",
    )
    steps = PreviewStepSerializer(many=True)


class MergeDatabaseSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="The source database.")
    new_name = serializers.CharField(help_text="Its name in the target (after the renames).")
    location = serializers.CharField()
    new_location = serializers.CharField(help_text="Its location after the location rules.")
    tables = serializers.IntegerField()


class MergeTableSerializer(serializers.Serializer):
    table = serializers.CharField(help_text="A Hive metastore table (DBS, TBLS, PARTITIONS, …).")
    rows = serializers.IntegerField(help_text="Rows coming in.")
    sequence = serializers.CharField(allow_null=True, help_text="The SEQUENCE_TABLE row allocating its ids.")
    first_id = serializers.IntegerField(allow_null=True, help_text="The first id it would get now (not reserved).")
    last_id = serializers.IntegerField(allow_null=True)


class MergeBlockerSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="target_older, database_exists, table_exists, location_overlap, …")
    rule = serializers.CharField()
    subject = serializers.CharField()
    message = serializers.CharField()


class MergeConversionSerializer(serializers.Serializer):
    table = serializers.CharField()
    column = serializers.CharField()
    action = serializers.ChoiceField(choices=["filled", "dropped"])
    value = serializers.CharField()


class MergeNotCarriedSerializer(serializers.Serializer):
    table = serializers.CharField()
    rows = serializers.IntegerField()
    reason = serializers.CharField()


class MergeViewSerializer(serializers.Serializer):
    view = serializers.CharField(help_text="db.name in the target.")
    original_text = serializers.CharField(allow_null=True, help_text="VIEW_ORIGINAL_TEXT as it arrives.")
    expanded_text = serializers.CharField(allow_null=True, help_text="VIEW_EXPANDED_TEXT as it arrives.")
    database = serializers.CharField(
        allow_null=True, help_text="Where Spark resolves its unqualified names (view.catalogAndNamespace.part.1)."
    )


class MergeEstimateSerializer(serializers.Serializer):
    seconds = serializers.FloatField()
    partitions = serializers.IntegerField()
    partitions_per_second = serializers.FloatField()
    basis = serializers.CharField(help_text="Where the throughput comes from (earlier merge jobs or the benchmark).")


class MergePreviewSerializer(serializers.Serializer):
    """What a merge will do (``operations.merge``): per Hive table the rows in and their ids, conflicts, conversions,
    what is not carried, the estimate; a merge request stores it as its preview."""

    kind = serializers.ChoiceField(choices=["merge"])
    metastore = serializers.CharField(help_text="The target: the request lives on it.")
    statement = serializers.CharField()
    source = serializers.CharField()
    target = serializers.CharField()
    renames = serializers.DictField(child=serializers.CharField())
    location_rules = serializers.ListField(child=serializers.DictField(child=serializers.CharField()))
    source_version = serializers.CharField()
    target_version = serializers.CharField()
    executable = serializers.BooleanField()
    fingerprint = serializers.CharField(help_text="What approval binds: the request, versions, databases, row counts.")
    risk = serializers.ChoiceField(choices=RISKS)
    criteria = PreviewCriterionSerializer(many=True)
    partitions_touched = serializers.IntegerField()
    databases = MergeDatabaseSerializer(many=True)
    tables = MergeTableSerializer(many=True)
    blockers = MergeBlockerSerializer(many=True)
    conversions = MergeConversionSerializer(many=True)
    not_carried = MergeNotCarriedSerializer(many=True)
    estimate = MergeEstimateSerializer(allow_null=True)
    views = MergeViewSerializer(
        many=True, required=False, help_text="Views rewritten to follow their renamed databases (the first 20)."
    )
    views_rewritten = serializers.IntegerField(required=False, help_text="How many views the merge rewrites.")


class MergeRevertPreviewSerializer(serializers.Serializer):
    """The revert of a merge execution: the rows it deletes (``operations.merge.revert``)."""

    kind = serializers.ChoiceField(choices=["merge_revert"])
    metastore = serializers.CharField()
    statement = serializers.CharField()
    fingerprint = serializers.CharField()
    risk = serializers.ChoiceField(choices=RISKS)
    criteria = PreviewCriterionSerializer(many=True)
    revert = serializers.DictField(help_text="The merge's revert preview as the execution core reports it.")
    blockers = serializers.ListField(child=serializers.DictField())


@extend_schema_field(
    PolymorphicProxySerializer(
        component_name="RequestPreview",
        serializers=[PreviewSerializer, MergePreviewSerializer, MergeRevertPreviewSerializer],
        resource_type_field_name=None,
    )
)
class PreviewField(serializers.JSONField):
    """The stored preview summary, as it is: an ALTER's preview, or a merge's (``kind`` merge)."""


_MERGE_OPERATION = {
    "type": "object",
    "description": "A merge (kind merge: source, target, databases, renames, location_rules, arriving) or its revert "
    "(kind merge_revert: execution, include_hive_rows).",
    "required": ["kind"],
    "properties": {"kind": {"type": "string", "enum": ["merge", "merge_revert"]}},
    "additionalProperties": True,
}


@extend_schema_field(
    {
        "oneOf": [
            _operation_schema(
                [*SPEC_KINDS, "revert"],
                "The structured operation. A revert request carries the inverse operation, or kind revert when it "
                "restores the rows of its execution's before-image.",
            ),
            _MERGE_OPERATION,
        ]
    }
)
class OperationField(serializers.JSONField):
    """The request's structured operation, as stored."""


class ExecutionSummarySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    state = serializers.ChoiceField(choices=Execution.State.choices)
    started_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    duration_ms = serializers.IntegerField(allow_null=True)
    expected_counts = serializers.DictField(help_text="Rows per metastore table: {insert, update, delete}.")
    actual_counts = serializers.DictField()
    error = serializers.CharField()


class JobSummarySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    state = serializers.ChoiceField(choices=JobState.choices)
    progress = serializers.IntegerField(help_text="0 to 100.")
    message = serializers.CharField()
    url = serializers.SerializerMethodField()

    def get_url(self, job: Job) -> str:
        return _link("job-detail", self.context, pk=job.pk)


class ChangeRequestRowSerializer(serializers.Serializer):
    """A change request of the list (its preview is on its own URL)."""

    id = serializers.IntegerField()
    url = serializers.SerializerMethodField()
    state = serializers.ChoiceField(choices=ChangeRequestState.choices)
    state_label = serializers.CharField(source="get_state_display")
    metastore = serializers.CharField()
    database = serializers.CharField(source="database_name")
    table = serializers.CharField(source="table_name")
    statement = serializers.CharField(help_text="The normalized Hive statement the preview was made for.")
    operation = OperationField()
    reason = serializers.CharField()
    risk = serializers.ChoiceField(choices=RISKS)
    requester = serializers.CharField(source="requester.username")
    required_approvals = serializers.IntegerField()
    approvals_given = serializers.IntegerField(help_text="Approvals given on the current preview or before.")
    revert_of = serializers.IntegerField(source="revert_of_id", allow_null=True, help_text="The request it reverts.")
    scheduled_for = serializers.DateTimeField(allow_null=True)
    error = serializers.CharField(help_text="Why the execution failed; empty otherwise.")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    submitted_at = serializers.DateTimeField(allow_null=True)
    job = serializers.SerializerMethodField(help_text="The latest job executing the request; null before.")

    def get_url(self, change: ChangeRequest) -> str:
        return _link("change-request-detail", self.context, pk=change.pk)

    @extend_schema_field(JobSummarySerializer(allow_null=True))
    def get_job(self, change: ChangeRequest) -> dict[str, Any] | None:
        job = next(iter(change.jobs.all()), None)  # newest first; prefetched on lists
        return JobSummarySerializer(job, context=self.context).data if job else None


class ActionSerializer(serializers.Serializer):
    """Whether the caller may take one action now, and if not why (the words and code a refusal answers with)."""

    allowed = serializers.BooleanField()
    reason = serializers.CharField(help_text="Why not; empty when allowed.")
    code = serializers.CharField(allow_null=True, help_text="The error code a refusal answers with; null when allowed.")


class ChangeRequestSerializer(ChangeRequestRowSerializer):
    """One change request with its preview, policy, execution and links to its approvals, comments and audit."""

    preview = PreviewField(help_text="The preview the request was submitted (or drafted) with.")
    fingerprint = serializers.CharField()
    policy = serializers.DictField(help_text="Why this many approvals: {rules, approvals}.")
    execution = ExecutionSummarySerializer(allow_null=True)
    approvals_url = serializers.SerializerMethodField()
    comments_url = serializers.SerializerMethodField()
    audit_url = serializers.SerializerMethodField()
    actions = serializers.SerializerMethodField(
        help_text="For the caller: each action (edit, submit, refresh, approve, reject, execute, schedule, cancel, "
        "revert, comment, settle) and whether it is allowed now, else why (the lifecycle's checks, as the pages show "
        "them). A table changed since the preview is found when approving or executing (stale_preview)."
    )

    @extend_schema_field(serializers.DictField(child=ActionSerializer()))
    def get_actions(self, change: ChangeRequest) -> dict[str, dict[str, Any]]:
        request = self.context.get("request")
        user = getattr(request, "user", None)
        if user is None:  # no caller to explain to (None would be the system itself)
            return {}
        return {
            name: {"allowed": allowed.ok, "reason": allowed.reason, "code": None if allowed else str(allowed.code)}
            for name, allowed in change_request_actions(change, user).items()
        }

    def get_approvals_url(self, change: ChangeRequest) -> str:
        return _link("change-request-approvals", self.context, pk=change.pk)

    def get_comments_url(self, change: ChangeRequest) -> str:
        return _link("change-request-comments", self.context, pk=change.pk)

    def get_audit_url(self, change: ChangeRequest) -> str:
        return f"{_link('audit-list', self.context)}?request={change.pk}"


class _PageSerializer(serializers.Serializer):
    next = serializers.URLField(allow_null=True, help_text="Absolute URL of the next page; null on the last page.")
    next_cursor = serializers.CharField(
        allow_null=True, help_text="Opaque cursor of the next page (pass as ?cursor=); null on the last page."
    )


class ChangeRequestPageSerializer(_PageSerializer):
    results = ChangeRequestRowSerializer(many=True)


class ApprovalSerializer(serializers.Serializer):
    """One approver's decision."""

    id = serializers.IntegerField()
    approver = serializers.CharField(source="approver.username")
    decision = serializers.ChoiceField(choices=Decision.choices)
    comment = serializers.CharField()
    fingerprint = serializers.CharField(help_text="The preview the approver saw.")
    current = serializers.SerializerMethodField(help_text="Given on the request's current preview.")
    created_at = serializers.DateTimeField()

    def get_current(self, approval: Approval) -> bool:
        return approval.fingerprint == self.context["change"].fingerprint


class ApprovalListSerializer(serializers.Serializer):
    results = ApprovalSerializer(many=True)


class CommentSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    author = serializers.CharField(source="author.username")
    body = serializers.CharField()
    created_at = serializers.DateTimeField()


class CommentListSerializer(serializers.Serializer):
    results = CommentSerializer(many=True)


class JobLogLineSerializer(serializers.Serializer):
    at = serializers.DateTimeField()
    message = serializers.CharField()


class JobSerializer(serializers.Serializer):
    """A background job: its state, progress (0–100), current message and log."""

    id = serializers.IntegerField()
    url = serializers.SerializerMethodField()
    kind = serializers.CharField()
    state = serializers.ChoiceField(choices=JobState.choices)
    done = serializers.BooleanField(
        source="is_done", help_text="succeeded, failed, errored or cancelled: stop polling."
    )
    progress = serializers.IntegerField(help_text="0 to 100.")
    message = serializers.CharField()
    log = JobLogLineSerializer(
        many=True, source="recent_log.lines", help_text="The log's last lines (at most 200), oldest first."
    )
    log_count = serializers.IntegerField(source="recent_log.count", help_text="How many lines the whole log has.")
    error = serializers.CharField(
        help_text="Why it failed (the work's reason) or errored (an unexpected exception's last line)."
    )
    change_request = serializers.IntegerField(source="change_request_id", allow_null=True)
    change_request_url = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    heartbeat_at = serializers.DateTimeField(
        allow_null=True, help_text="The worker's last progress report; a job silent for longer is dead."
    )
    attempts = serializers.IntegerField(help_text="How many times a worker claimed the job (resumes count).")
    worker = serializers.CharField(help_text="host:pid of the worker that ran it last.")
    program = serializers.CharField(help_text="The Spark program, for a Spark job; empty otherwise.")
    partitions_done = serializers.IntegerField(allow_null=True)
    partitions_total = serializers.IntegerField(allow_null=True)
    files_done = serializers.IntegerField(allow_null=True)
    files_total = serializers.IntegerField(allow_null=True)
    bytes_done = serializers.IntegerField(allow_null=True)
    bytes_total = serializers.IntegerField(allow_null=True)
    bytes_per_second = serializers.FloatField(allow_null=True, help_text="Throughput so far.")
    eta_seconds = serializers.SerializerMethodField(help_text="Time left at the throughput so far.")
    completed = serializers.ListField(child=serializers.CharField(), help_text="Units (partitions) verified so far.")
    log_tail = serializers.CharField(help_text="The last lines of the Spark driver's log.")
    spark_master = serializers.CharField()
    spark_app_id = serializers.CharField()
    spark_ui_url = serializers.CharField(help_text="The Spark application's web UI, while it runs.")
    cancel_requested_at = serializers.DateTimeField(allow_null=True)
    committing_at = serializers.DateTimeField(
        allow_null=True, help_text="When it passed its point of no return: from then on a cancel is too late."
    )
    result = serializers.SerializerMethodField(help_text="The Spark program's result manifest, once the job is done.")

    def get_url(self, job: Job) -> str:
        return _link("job-detail", self.context, pk=job.pk)

    @extend_schema_field({"type": "object", "nullable": True, "additionalProperties": True})
    def get_result(self, job: Job) -> Any:
        return job.result if job.is_done else None  # a manifest can be large: not sent to every poll

    @extend_schema_field(OpenApiTypes.FLOAT)
    def get_eta_seconds(self, job: Job) -> float | None:
        return None if job.eta is None else round(job.eta.total_seconds(), 1)

    @extend_schema_field(OpenApiTypes.URI)
    def get_change_request_url(self, job: Job) -> str | None:
        if job.change_request_id is None:
            return None
        return _link("change-request-detail", self.context, pk=job.change_request_id)


class AuditRecordSerializer(serializers.Serializer):
    """One append-only audit record, chained to the one before by its hash."""

    id = serializers.IntegerField()
    url = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    actor = serializers.CharField()
    action = serializers.CharField(help_text="create, edit, submit, approve, reject, execute, finish, …")
    outcome = serializers.CharField()
    request = serializers.IntegerField(source="request_id_ref", allow_null=True, help_text="Change request id.")
    execution = serializers.IntegerField(source="execution_id_ref", allow_null=True, help_text="Execution id.")
    metastore = serializers.CharField()
    database = serializers.CharField(source="database_name")
    table = serializers.CharField(source="table_name")
    statement = serializers.CharField()
    preview_summary = serializers.DictField()
    counts = serializers.DictField()
    details = serializers.DictField()
    previous_hash = serializers.CharField()
    hash = serializers.CharField()

    def get_url(self, record: AuditRecord) -> str:
        return _link("audit-detail", self.context, pk=record.pk)


class AuditPageSerializer(_PageSerializer):
    results = AuditRecordSerializer(many=True)


class AuditExportRowSerializer(serializers.Serializer):
    """One record of the export (``manage.py export_audit``'s columns: the fields the hash covers)."""

    id = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    actor = serializers.CharField()
    action = serializers.CharField()
    request_id_ref = serializers.IntegerField(allow_null=True)
    execution_id_ref = serializers.IntegerField(allow_null=True)
    metastore = serializers.CharField()
    database_name = serializers.CharField()
    table_name = serializers.CharField()
    statement = serializers.CharField()
    outcome = serializers.CharField()
    counts = serializers.DictField()
    preview_summary = serializers.DictField()
    details = serializers.DictField()
    previous_hash = serializers.CharField()
    hash = serializers.CharField()


class AuditExportSerializer(serializers.Serializer):
    """The JSON export: the records and the chain's anchor (``manage.py verify_audit --expect-head HEAD:COUNT``)."""

    chain_head = serializers.CharField(help_text="The hash of the chain's last record when the export was taken.")
    chain_count = serializers.IntegerField(help_text="How many records the chain held then.")
    records = AuditExportRowSerializer(many=True)
