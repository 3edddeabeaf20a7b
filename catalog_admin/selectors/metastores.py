"""Resolving registered metastores and reading their schema version."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from django.conf import settings
from django.db import DatabaseError, connections

from catalog_admin.errors import ApplicationError, ErrorCode, NotFound, metastore_unavailable
from catalog_admin.metastores import MetastoreConfig
from catalog_admin.models import SchemaVersionRow
from catalog_admin.schema import (
    MetastoreSchema,
    SchemaVersion,
    UnsupportedSchemaVersion,
)

__all__ = (
    "Metastore",
    "clear_schema_cache",
    "get_metastore",
    "is_metastore_alias",
    "metastore_configs",
    "metastore_status",
)

SCHEMA_CACHE_SECONDS = 60
_schema_cache: dict[str, tuple[float, MetastoreSchema]] = {}
_cache_lock = threading.Lock()


@dataclass(frozen=True)
class Metastore:
    """A reachable metastore of a supported schema version."""

    config: MetastoreConfig
    schema: MetastoreSchema

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def alias(self) -> str:
        return self.config.alias

    @property
    def vendor(self) -> str:
        return connections[self.alias].vendor

    @property
    def is_default(self) -> bool:
        return self.name == settings.DEFAULT_METASTORE


@dataclass(frozen=True)
class MetastoreStatus:
    """A registered metastore as the overview shows it: reachable or not, and why."""

    config: MetastoreConfig
    metastore: Metastore | None
    error: str = ""


def is_metastore_alias(alias: str) -> bool:
    return any(c.alias == alias for c in settings.METASTORE_CONFIGS)


def metastore_configs() -> list[MetastoreConfig]:
    return list(settings.METASTORE_CONFIGS)


def get_metastore(name: str | None = None) -> Metastore:
    """The named (or default) metastore, with its schema; raises ApplicationError if unknown or unusable."""
    name = name or settings.DEFAULT_METASTORE
    config = next((c for c in settings.METASTORE_CONFIGS if c.name == name), None)
    if config is None:
        raise NotFound("metastore", name)
    return Metastore(config=config, schema=_schema(config))


def metastore_status(config: MetastoreConfig) -> MetastoreStatus:
    try:
        return MetastoreStatus(config=config, metastore=get_metastore(config.name))
    except ApplicationError as exc:
        return MetastoreStatus(config=config, metastore=None, error=exc.message)


def clear_schema_cache() -> None:
    with _cache_lock:
        _schema_cache.clear()


def _schema(config: MetastoreConfig) -> MetastoreSchema:
    now = time.monotonic()
    with _cache_lock:
        cached = _schema_cache.get(config.alias)
    if cached and now - cached[0] < SCHEMA_CACHE_SECONDS:
        return cached[1]
    schema = _read_schema(config)
    with _cache_lock:
        _schema_cache[config.alias] = (now, schema)
    return schema


def _read_schema(config: MetastoreConfig) -> MetastoreSchema:
    try:
        raw = SchemaVersionRow.objects.using(config.alias).values_list("schema_version", flat=True).first()
    except DatabaseError as exc:
        raise metastore_unavailable(exc, config.name) from exc
    if raw is None:
        raise ApplicationError(
            ErrorCode.UNSUPPORTED_SCHEMA_VERSION,
            f"Metastore '{config.name}' has no row in its VERSION table; is it a Hive metastore?",
            {"metastore": config.name},
        )
    try:
        version = SchemaVersion.parse(raw)
    except UnsupportedSchemaVersion:
        version = None
    if version is None or not version.is_supported:
        error = UnsupportedSchemaVersion(raw, config.name)
        raise ApplicationError(
            ErrorCode.UNSUPPORTED_SCHEMA_VERSION,
            str(error),
            {"metastore": config.name, "version": raw},
        )
    return MetastoreSchema(version=version, raw_version=raw)
