"""The audit log as the API returns it: records, pages of them, the export."""

from __future__ import annotations

from rest_framework import serializers

from operations.api.serializers.base import PageSerializer, link
from operations.models import AuditRecord

__all__ = ("AuditExportRowSerializer", "AuditExportSerializer", "AuditPageSerializer", "AuditRecordSerializer")


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
        return link("audit-detail", self.context, pk=record.pk)


class AuditPageSerializer(PageSerializer):
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
