"""
Hive metastore schema versions and the columns that exist only in some of them.

Schema versions themselves and their capabilities live in :mod:`catalog_admin.hive.versions` (re-exported here).
Model fields that Hive added or removed between versions are declared with :func:`versioned`.
A :class:`MetastoreSchema` (built from the ``VERSION`` row) answers whether a field exists,
so that every query defers the columns the connected metastore does not have.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from catalog_admin.hive.versions import SUPPORTED_LINES, Capabilities, SchemaVersion, UnsupportedSchemaVersion

if TYPE_CHECKING:
    from django.db import models

__all__ = (
    "SUPPORTED_LINES",
    "Capabilities",
    "MetastoreSchema",
    "SchemaVersion",
    "UnsupportedSchemaVersion",
    "field_available",
    "model_available",
    "versioned",
)

F = TypeVar("F", bound="models.Field")


def versioned(field: F, *, since: str = "", until: str = "") -> F:
    """Mark a model field as present from ``since`` (inclusive) until ``until`` (exclusive)."""
    field.hive_since = SchemaVersion.parse(since) if since else None  # type: ignore[attr-defined]
    field.hive_until = SchemaVersion.parse(until) if until else None  # type: ignore[attr-defined]
    return field


def field_available(field: models.Field, version: SchemaVersion) -> bool:
    """Whether ``field``'s column exists in a metastore of schema ``version``."""
    since = getattr(field, "hive_since", None)
    until = getattr(field, "hive_until", None)
    return version.within(since, until)


def model_available(model: type[models.Model], version: SchemaVersion) -> bool:
    """Whether the whole table exists in ``version`` (declared on the model as ``hive_since`` / ``hive_until``)."""
    since, until = getattr(model, "hive_since", ""), getattr(model, "hive_until", "")
    return version.within(SchemaVersion.parse(since) if since else None, SchemaVersion.parse(until) if until else None)


@dataclass(frozen=True)
class MetastoreSchema:
    """What one connected metastore's schema holds."""

    version: SchemaVersion
    raw_version: str

    def has(self, model: type[models.Model], field_name: str) -> bool:
        return field_available(model._meta.get_field(field_name), self.version)

    def has_table(self, model: type[models.Model]) -> bool:
        return model_available(model, self.version)

    def missing_fields(self, model: type[models.Model]) -> tuple[str, ...]:
        """Names of concrete fields of ``model`` whose columns this schema lacks."""
        return tuple(f.name for f in model._meta.concrete_fields if not field_available(f, self.version))

    @property
    def capabilities(self) -> Capabilities:
        """What this version's schema holds and its Hive does, by name (``catalog_admin.hive.versions``)."""
        return self.version.capabilities

    @property
    def has_catalogs(self) -> bool:
        return self.capabilities.catalogs

    @property
    def has_write_ids(self) -> bool:
        return self.capabilities.write_ids
