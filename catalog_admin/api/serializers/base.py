"""
Read-only output serializers of the catalog API: the bases every resource's serializers share.

Instances come from selectors (models and the selectors' dataclasses). Columns that Hive added or
dropped between schema versions are deferred by the selectors on metastores that lack them; the
:class:`HiveSerializer` base renders such fields as ``null`` without ever reading them (reading a
deferred field would query a column that does not exist).
"""

from __future__ import annotations

import base64
from typing import Any, ClassVar

from django.core.exceptions import FieldDoesNotExist
from django.db import models
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.fields import SkipField
from rest_framework.reverse import reverse

from catalog_admin.errors import ErrorCode

__all__ = (
    "Base64Field",
    "ErrorSerializer",
    "HiveSerializer",
    "PageSerializer",
    "StatisticValueField",
    "api_url",
    "table_url",
)


def api_url(name: str, context: dict[str, Any], **kwargs: Any) -> str:
    """The absolute URL of the API route ``name`` (absolute when the context has the request)."""
    return reverse(f"api:{name}", kwargs=kwargs, request=context.get("request"))


class ErrorSerializer(serializers.Serializer):
    """Every API error: a stable code, a human message and machine-readable details."""

    code = serializers.CharField(
        help_text=f"Stable error code: {', '.join(c.value for c in ErrorCode)}; internal_error for a bug (500)."
    )
    message = serializers.CharField(help_text="What went wrong, naming the object or parameter.")
    details = serializers.DictField(help_text="Machine-readable context (kind, name, parameter, metastore …).")


@extend_schema_field(OpenApiTypes.BYTE)
class Base64Field(serializers.Field):
    """Binary column (a sketch or histogram) as base64."""

    def to_representation(self, value: bytes | memoryview) -> str:
        return base64.b64encode(bytes(value)).decode("ascii")


# anyOf, not oneOf: an integer is a number too, so it matched two of oneOf's schemas and was refused.
@extend_schema_field({"anyOf": [{"type": "number"}, {"type": "string"}], "nullable": True})
class StatisticValueField(serializers.Field):
    """A column statistic bound: integer, floating point or decimal (as a string), whichever Hive recorded."""

    def to_representation(self, value: Any) -> Any:
        return value


class HiveSerializer(serializers.Serializer):
    """
    Fields read from a Hive model instance; those whose column the metastore's schema lacks are ``null``.

    ``hive_model`` is the model and ``hive_path`` the attribute path from the serialized instance to the model
    instance (``""`` when the instance is the model itself, ``"database"`` for a ``DatabaseSummary``).
    ``context["metastore"]`` is the :class:`~catalog_admin.selectors.metastores.Metastore`. A versioned field is
    never read on a metastore without its column; declare it ``allow_null=True`` (a test checks this).
    """

    hive_model: ClassVar[type[models.Model]]
    hive_path: ClassVar[str] = ""

    def to_representation(self, instance: Any) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for field in self._readable_fields:
            if not self.field_available(field):
                data[field.field_name] = None
                continue
            try:
                attribute = field.get_attribute(instance)
            except SkipField:
                continue
            data[field.field_name] = None if attribute is None else field.to_representation(attribute)
        return data

    def field_available(self, field: serializers.Field) -> bool:
        """Whether ``field`` reads a column the metastore has (fields not on the model always are)."""
        column = self.hive_column(field)
        return column is None or self.context["metastore"].schema.has(self.hive_model, column)

    @classmethod
    def hive_column(cls, field: serializers.Field) -> str | None:
        """The model field ``field`` reads, if it reads one."""
        if field.source == "*":
            return None
        prefix = f"{cls.hive_path}." if cls.hive_path else ""
        if not field.source.startswith(prefix):
            return None
        name = field.source.removeprefix(prefix).split(".", 1)[0]
        try:
            cls.hive_model._meta.get_field(name)
        except FieldDoesNotExist:  # a property such as ``low_value``
            return None
        return name


# A cursor page: the URL and the cursor of the next one; each list adds its ``results``. No docstring: the schema
# would give it to every page that has none of its own.
class PageSerializer(serializers.Serializer):
    next = serializers.URLField(allow_null=True, help_text="Absolute URL of the next page; null on the last page.")
    next_cursor = serializers.CharField(
        allow_null=True, help_text="Opaque cursor of the next page (pass as ?cursor=); null on the last page."
    )


def table_url(name: str, context: dict[str, Any], database: str, table: str) -> str:
    """The URL of a table's route ``name`` on the context's metastore."""
    return api_url(name, context, metastore=context["metastore"].name, database=database, table=table)
