"""Serializers of the metastores and their databases."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.fields import get_attribute

from catalog_admin.api.serializers.base import HiveSerializer, api_url
from catalog_admin.models import Database

__all__ = (
    "DatabaseDetailSerializer",
    "DatabaseListSerializer",
    "DatabaseSerializer",
    "MetastoreListSerializer",
    "MetastoreSerializer",
)


class MetastoreSerializer(serializers.Serializer):
    """A registered metastore (a ``MetastoreStatus``): whether it can be read and, if not, why."""

    name = serializers.CharField(source="config.name")
    vendor = serializers.CharField(source="config.vendor", help_text="postgresql, mysql or sqlite.")
    display_url = serializers.CharField(
        source="config.display_url", help_text="Connection URL with its password and credential parameters redacted."
    )
    schema_version = serializers.SerializerMethodField(help_text="Hive schema version; null when unreachable.")
    default = serializers.SerializerMethodField()
    reachable = serializers.SerializerMethodField()
    error = serializers.SerializerMethodField(help_text="Why the metastore cannot be read; null when reachable.")
    url = serializers.SerializerMethodField()
    databases_url = serializers.SerializerMethodField()

    def get_schema_version(self, status: Any) -> str | None:
        return status.metastore.schema.raw_version if status.metastore else None

    def get_default(self, status: Any) -> bool:
        return status.config.name == self.context["default_metastore"]

    def get_reachable(self, status: Any) -> bool:
        return status.metastore is not None

    def get_error(self, status: Any) -> str | None:
        return status.error or None

    def get_url(self, status: Any) -> str:
        return api_url("metastore-detail", self.context, metastore=status.config.name)

    def get_databases_url(self, status: Any) -> str:
        return api_url("database-list", self.context, metastore=status.config.name)


class MetastoreListSerializer(serializers.Serializer):
    results = MetastoreSerializer(many=True)


class _DatabaseFieldsSerializer(HiveSerializer):
    hive_model = Database
    hive_path = "database"

    name = serializers.CharField(source="database.name")
    description = serializers.CharField(source="database.description", allow_null=True)
    location_uri = serializers.CharField(source="database.location_uri")
    managed_location_uri = serializers.CharField(
        source="database.managed_location_uri", allow_null=True, help_text="Hive 4.0+; null before."
    )
    owner_name = serializers.CharField(source="database.owner_name", allow_null=True)
    owner_type = serializers.CharField(source="database.owner_type", allow_null=True)
    catalog_name = serializers.CharField(source="database.catalog_name", allow_null=True, help_text="Hive 3.0+.")
    type = serializers.CharField(source="database.type", allow_null=True, help_text="NATIVE or REMOTE; Hive 4.0+.")
    create_time = serializers.IntegerField(
        source="database.create_time", allow_null=True, help_text="Seconds since the epoch; Hive 4.0+."
    )
    url = serializers.SerializerMethodField()
    tables_url = serializers.SerializerMethodField()

    def get_url(self, instance: Any) -> str:
        return self._database_url("database-detail", instance)

    def get_tables_url(self, instance: Any) -> str:
        return self._database_url("table-list", instance)

    def _database_url(self, name: str, instance: Any) -> str:
        database = get_attribute(instance, ["database"])
        return api_url(name, self.context, metastore=self.context["metastore"].name, database=database.name)


class DatabaseSerializer(_DatabaseFieldsSerializer):
    """A database of the list (a ``DatabaseSummary``) with its table counts."""

    table_count = serializers.IntegerField(source="tables", help_text="Tables and views.")
    view_count = serializers.IntegerField(source="views", help_text="Virtual and materialized views.")
    external_count = serializers.IntegerField(source="external", help_text="External tables.")


class DatabaseDetailSerializer(_DatabaseFieldsSerializer):
    """One database (``{"database", "params"}``) with its DATABASE_PARAMS."""

    parameters = serializers.DictField(child=serializers.CharField(allow_null=True), source="params")


class DatabaseListSerializer(serializers.Serializer):
    results = DatabaseSerializer(many=True)
