"""Serializers of a table's ACID bookkeeping (transactions, locks, compactions) and of its ACID directories."""

from __future__ import annotations

from rest_framework import serializers

from catalog_admin.api.serializers.base import HiveSerializer, PageSerializer
from catalog_admin.models import CompactionQueueEntry, CompletedCompaction, HiveLock, Transaction

__all__ = (
    "AcidDirectoryPageSerializer",
    "AcidSerializer",
    "CompactionNeedListSerializer",
    "CompactionSerializer",
    "CompletedCompactionSerializer",
    "LockSerializer",
    "TransactionSerializer",
)


class TransactionSerializer(HiveSerializer):
    """An open or aborted transaction writing to the table (TXNS)."""

    hive_model = Transaction

    id = serializers.IntegerField()
    state = serializers.CharField(help_text="o: open, a: aborted.")
    started = serializers.IntegerField(help_text="Milliseconds since the epoch.")
    last_heartbeat = serializers.IntegerField(help_text="Milliseconds since the epoch.")
    user = serializers.CharField()
    host = serializers.CharField()
    agent_info = serializers.CharField(allow_null=True)
    heartbeat_count = serializers.IntegerField(allow_null=True)
    type = serializers.IntegerField(allow_null=True, help_text="Hive 3.0+.")


class LockSerializer(HiveSerializer):
    """A lock on the table or one of its partitions (HIVE_LOCKS)."""

    hive_model = HiveLock

    ext_id = serializers.IntegerField()
    int_id = serializers.IntegerField()
    txn_id = serializers.IntegerField()
    partition = serializers.CharField(allow_null=True)
    state = serializers.CharField(help_text="a: acquired, w: waiting.")
    type = serializers.CharField(help_text="e: exclusive, r: shared read, w: shared write.")
    last_heartbeat = serializers.IntegerField()
    acquired_at = serializers.IntegerField(allow_null=True)
    user = serializers.CharField()
    host = serializers.CharField()
    agent_info = serializers.CharField(allow_null=True)
    blocked_by_ext_id = serializers.IntegerField(allow_null=True)
    blocked_by_int_id = serializers.IntegerField(allow_null=True)


class CompactionSerializer(HiveSerializer):
    """A queued or running compaction (COMPACTION_QUEUE)."""

    hive_model = CompactionQueueEntry

    id = serializers.IntegerField()
    partition = serializers.CharField(allow_null=True)
    state = serializers.CharField()
    type = serializers.CharField(help_text="a: major, i: minor.")
    worker_id = serializers.CharField(allow_null=True)
    start = serializers.IntegerField(allow_null=True)
    run_as = serializers.CharField(allow_null=True)
    highest_txn_id = serializers.IntegerField(allow_null=True, help_text="Before Hive 3.0.")
    highest_write_id = serializers.IntegerField(allow_null=True, help_text="Hive 3.0+.")
    hadoop_job_id = serializers.CharField(allow_null=True)
    enqueue_time = serializers.IntegerField(allow_null=True, help_text="Hive 4.0+.")
    error_message = serializers.CharField(allow_null=True, help_text="Hive 4.0+.")


class CompletedCompactionSerializer(CompactionSerializer):
    """A finished compaction (COMPLETED_COMPACTIONS)."""

    hive_model = CompletedCompaction

    end = serializers.IntegerField(allow_null=True)


class AcidSerializer(serializers.Serializer):
    """ACID bookkeeping of a transactional table."""

    next_write_id = serializers.IntegerField(allow_null=True, help_text="Hive 3.0+.")
    open_transactions = TransactionSerializer(many=True)
    locks = LockSerializer(many=True)
    compaction_queue = CompactionSerializer(many=True)
    completed_compactions = CompletedCompactionSerializer(many=True, help_text="The 20 most recent.")


class AcidDirectorySerializer(serializers.Serializer):
    """A base or (delete) delta directory as ``AcidUtils`` parses its name."""

    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=["base", "delta", "delete_delta"])
    min_write_id = serializers.IntegerField()
    max_write_id = serializers.IntegerField()
    statement_id = serializers.IntegerField(help_text="-1 when the name has none.")
    visibility_txn_id = serializers.IntegerField(help_text="Hive 4's _v suffix; 0 when the name has none.")
    size = serializers.IntegerField(help_text="Bytes under the directory.")


class AcidStateSerializer(serializers.Serializer):
    """What ``AcidUtils.getAcidState`` returns for one directory."""

    base = AcidDirectorySerializer(allow_null=True)
    deltas = AcidDirectorySerializer(many=True)
    delete_deltas = AcidDirectorySerializer(many=True)
    obsolete = serializers.ListField(child=serializers.CharField())
    aborted = serializers.ListField(child=serializers.CharField())
    original_files = serializers.ListField(child=serializers.CharField())
    not_enough_history = serializers.CharField(help_text="Hive's ACID_NOT_ENOUGH_HISTORY error, or ''.")


class CompactionNeedSerializer(serializers.Serializer):
    """Whether Hive's Initiator would queue a compaction (its thresholds), and why."""

    needed = serializers.BooleanField()
    compaction_type = serializers.CharField(help_text="major, minor or '' (none).")
    reason = serializers.CharField()
    base_bytes = serializers.IntegerField()
    delta_bytes = serializers.IntegerField()
    deltas = serializers.IntegerField()
    aborted_transactions = serializers.IntegerField()
    score = serializers.FloatField(help_text="How far past its worst threshold (1.0: at it).")


class DirectoryReportSerializer(serializers.Serializer):
    """One table or partition directory."""

    partition = serializers.CharField(allow_null=True)
    location = serializers.CharField(allow_null=True)
    listed = serializers.BooleanField(help_text="False when the filesystem cannot be listed from the console.")
    state = AcidStateSerializer(allow_null=True)
    need = CompactionNeedSerializer(allow_null=True)


class AcidDirectoryPageSerializer(PageSerializer):
    write_ids = serializers.CharField(help_text="The valid write-id list: high-water mark:min open:open:aborted.")
    compaction_queue = CompactionSerializer(many=True)
    completed_compactions = CompletedCompactionSerializer(many=True)
    results = DirectoryReportSerializer(many=True)


class CompactionNeedRowSerializer(serializers.Serializer):
    database = serializers.CharField()
    table = serializers.CharField()
    report = DirectoryReportSerializer()


class CompactionNeedListSerializer(serializers.Serializer):
    results = CompactionNeedRowSerializer(many=True)
