"""
Hive metastore schema versions and the columns that exist only in some of them.

Model fields that Hive added or removed between versions are declared with :func:`versioned`.
A :class:`MetastoreSchema` (built from the ``VERSION`` row) answers whether a field exists,
so that every query defers the columns the connected metastore does not have.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import total_ordering
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from django.db import models

__all__ = (
    "SUPPORTED_LINES",
    "MetastoreSchema",
    "SchemaVersion",
    "UnsupportedSchemaVersion",
    "field_available",
    "versioned",
)

F = TypeVar("F", bound="models.Field")

# Release lines the console is tested against (official scripts in ../shared).
SUPPORTED_LINES = ((2, 3), (3, 1), (4, 0))
_VERSION_PATTERN = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-([A-Za-z]+)-?(\d+)?)?$")


class UnsupportedSchemaVersion(Exception):
    """The metastore's VERSION row names a schema the console cannot read safely."""

    def __init__(self, raw: str, metastore: str = "") -> None:
        where = f"Metastore '{metastore}'" if metastore else "The metastore"
        lines = ", ".join(f"{major}.{minor}.x" for major, minor in SUPPORTED_LINES)
        super().__init__(f"{where} has Hive schema version '{raw}', which is not supported (supported: {lines}).")
        self.raw = raw
        self.metastore = metastore


@total_ordering
@dataclass(frozen=True)
class SchemaVersion:
    """A Hive schema version such as ``2.3.0``, ``4.0.0-beta-2`` or ``4.0.0``; pre-releases sort first."""

    major: int
    minor: int
    patch: int
    pre_tag: str = ""
    pre_number: int = 0

    @classmethod
    def parse(cls, raw: str) -> SchemaVersion:
        match = _VERSION_PATTERN.match(raw.strip())
        if not match:
            raise UnsupportedSchemaVersion(raw)
        major, minor, patch, tag, number = match.groups()
        return cls(int(major), int(minor), int(patch), (tag or "").lower(), int(number or 0))

    @property
    def line(self) -> tuple[int, int]:
        return (self.major, self.minor)

    @property
    def is_supported(self) -> bool:
        return self.line in SUPPORTED_LINES

    def _key(self) -> tuple:
        # A release sorts after its pre-releases: 4.0.0-alpha-1 < 4.0.0-beta-2 < 4.0.0.
        pre = (0, self.pre_tag, self.pre_number) if self.pre_tag else (1, "", 0)
        return (self.major, self.minor, self.patch, pre)

    def __lt__(self, other: SchemaVersion) -> bool:
        return self._key() < other._key()

    def __str__(self) -> str:
        pre = f"-{self.pre_tag}-{self.pre_number}" if self.pre_tag else ""
        return f"{self.major}.{self.minor}.{self.patch}{pre}"


def versioned(field: F, *, since: str = "", until: str = "") -> F:
    """Mark a model field as present from ``since`` (inclusive) until ``until`` (exclusive)."""
    field.hive_since = SchemaVersion.parse(since) if since else None  # type: ignore[attr-defined]
    field.hive_until = SchemaVersion.parse(until) if until else None  # type: ignore[attr-defined]
    return field


def field_available(field: models.Field, version: SchemaVersion) -> bool:
    """Whether ``field``'s column exists in a metastore of schema ``version``."""
    since = getattr(field, "hive_since", None)
    until = getattr(field, "hive_until", None)
    return (since is None or version >= since) and (until is None or version < until)


def model_available(model: type[models.Model], version: SchemaVersion) -> bool:
    """Whether the whole table exists in ``version`` (declared on the model as ``hive_since``)."""
    since = getattr(model, "hive_since", "")
    return not since or version >= SchemaVersion.parse(since)


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
    def has_catalogs(self) -> bool:
        return self.version >= SchemaVersion(3, 0, 0)

    @property
    def has_write_ids(self) -> bool:
        return self.version >= SchemaVersion(3, 0, 0)
