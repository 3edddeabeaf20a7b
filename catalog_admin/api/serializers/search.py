"""Serializers of the search's results."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from catalog_admin.api.serializers.base import api_url, table_url

__all__ = (
    "ColumnHitSerializer",
    "CommentHitSerializer",
    "DatabaseHitSerializer",
    "SearchSerializer",
    "TableHitSerializer",
)


class DatabaseHitSerializer(serializers.Serializer):
    name = serializers.CharField()
    url = serializers.SerializerMethodField()

    def get_url(self, hit: Any) -> str:
        return api_url("database-detail", self.context, metastore=self.context["metastore"].name, database=hit.name)


class TableHitSerializer(serializers.Serializer):
    database = serializers.CharField()
    name = serializers.CharField()
    type = serializers.CharField()
    url = serializers.SerializerMethodField()

    def get_url(self, hit: Any) -> str:
        return table_url("table-detail", self.context, hit.database, hit.name)


class ColumnHitSerializer(serializers.Serializer):
    database = serializers.CharField()
    table = serializers.CharField()
    column = serializers.CharField()
    type = serializers.CharField()
    url = serializers.SerializerMethodField(help_text="The table's URL.")

    def get_url(self, hit: Any) -> str:
        return table_url("table-detail", self.context, hit.database, hit.table)


class CommentHitSerializer(serializers.Serializer):
    database = serializers.CharField()
    table = serializers.CharField()
    column = serializers.CharField(allow_blank=True, help_text="Empty for the table's own comment.")
    comment = serializers.CharField(allow_blank=True)
    url = serializers.SerializerMethodField(help_text="The table's URL.")

    def get_url(self, hit: Any) -> str:
        return table_url("table-detail", self.context, hit.database, hit.table)


class SearchSerializer(serializers.Serializer):
    """Databases, tables (by name or ``db.table``), columns and comments matching the query (``SearchResults``)."""

    query = serializers.CharField(help_text="The query, trimmed and lower-cased.")
    metastore = serializers.SerializerMethodField()
    databases = DatabaseHitSerializer(many=True)
    tables = TableHitSerializer(many=True, help_text="Exact and prefix matches first.")
    truncated = serializers.BooleanField(help_text="More tables matched than are listed.")
    columns = ColumnHitSerializer(many=True, help_text="Columns by name, or by db.table.column.")
    comments = CommentHitSerializer(many=True, help_text="Tables and columns whose comment contains the query.")

    def get_metastore(self, results: Any) -> str:
        return self.context["metastore"].name
