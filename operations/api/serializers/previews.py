"""What a change request's stored preview holds: an ALTER's preview, a merge's, a merge revert's (documentation of
the stored summary, rendered as stored)."""

from __future__ import annotations

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from operations.api.serializers.base import RISKS

__all__ = (
    "DatabasePlanSerializer",
    "MergePreviewSerializer",
    "MergeRevertPreviewSerializer",
    "PreviewCriterionSerializer",
    "PreviewField",
    "PreviewSerializer",
    "PrivilegePreviewSerializer",
)


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
    entries = serializers.ListField(
        child=serializers.CharField(),
        help_text="A folder moving whole for its partitions (a dropped day of hourly partitions): the directories it "
        "must hold, exactly, when it moves (listed again at execution). Empty for any other move.",
    )
    sampled = serializers.ListField(
        child=serializers.IntegerField(),
        min_length=2,
        max_length=2,
        allow_null=True,
        help_text="[counted, found]: files and bytes are scaled from that many of the partition directories found "
        "inside (evenly spaced by name; everything else inside counted in full). Null: counted in full.",
    )


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
    comparable = serializers.BooleanField(
        required=False, help_text="False when Hive cannot do this work (relocate, rewrite): no estimate to compare."
    )


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


class DatabasePlanSerializer(serializers.Serializer):
    """A database statement's plan (issue 27, ``operations.planners.databases.DatabasePlan``): the DBS row and
    parameters written, the directories, the event."""

    kind = serializers.ChoiceField(choices=["database"])
    metastore = serializers.CharField()
    schema_version = serializers.CharField()
    statement = serializers.CharField()
    database = serializers.CharField()
    database_id = serializers.IntegerField(allow_null=True)
    fingerprint = serializers.CharField()
    risk = serializers.ChoiceField(choices=RISKS)
    criteria = PreviewCriterionSerializer(many=True)
    diff = serializers.ListField(child=serializers.DictField(), help_text="{field, before, after} per column/param.")
    row_changes = serializers.ListField(child=serializers.DictField())
    directories = serializers.ListField(child=serializers.DictField(), help_text="create, remove, trash or restore.")
    event = serializers.CharField(help_text="CREATE_DATABASE, ALTER_DATABASE, DROP_DATABASE, or empty.")
    noop = serializers.BooleanField(help_text="IF [NOT] EXISTS found nothing to do.")
    table_events = serializers.DictField(
        child=serializers.IntegerField(),
        required=False,
        help_text="The tables' events by type: DROP_TABLE (CASCADE); CREATE_TABLE, ADD_PARTITION (its undrop).",
    )
    tables = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        help_text="DROP DATABASE … CASCADE: each table {id, name, type, partitions, data (trash, kept, none), "
        "location}.",
    )
    blockers = serializers.ListField(child=serializers.DictField())
    warnings = serializers.ListField(child=serializers.DictField())


class PrivilegePreviewSerializer(serializers.Serializer):
    """An access-control statement or its revert: the rows it writes (``operations.planners.privileges``)."""

    kind = serializers.ChoiceField(choices=["privilege"])
    metastore = serializers.CharField()
    statement = serializers.CharField()
    grantor = serializers.CharField(help_text="GRANTOR of the rows written: the requesting user (type USER).")
    reverts = serializers.IntegerField(allow_null=True, help_text="The execution a revert puts back.")
    risk = serializers.ChoiceField(choices=RISKS)
    criteria = PreviewCriterionSerializer(many=True)
    changes = serializers.ListField(
        child=serializers.DictField(), help_text="Each row inserted, deleted or updated: table, action, row_id, values."
    )
    counts = serializers.DictField(help_text="Rows per metastore table: insert, update, delete.")
    blockers = serializers.ListField(child=serializers.DictField())
    warnings = serializers.ListField(child=serializers.DictField())


@extend_schema_field(
    PolymorphicProxySerializer(
        component_name="RequestPreview",
        serializers=[
            PreviewSerializer,
            MergePreviewSerializer,
            MergeRevertPreviewSerializer,
            DatabasePlanSerializer,
            PrivilegePreviewSerializer,
        ],
        resource_type_field_name=None,
    )
)
class PreviewField(serializers.JSONField):
    """The stored preview summary, as it is: an ALTER's preview, or a merge's (``kind`` merge)."""
