"""Database routing: Hive models live in the metastores, everything else in the console's own database."""

from __future__ import annotations

from typing import Any

from django.conf import settings

__all__ = ("MetastoreRouter",)


class MetastoreRouter:
    """
    Send Hive metastore models to a metastore alias and keep migrations off the metastores.

    Selectors always name the metastore explicitly (``.using(alias)``); without one, reads and
    writes of Hive models go to the default metastore. Hive's schema is never migrated by Django.
    """

    def db_for_read(self, model: type, **hints: Any) -> str | None:
        if _is_hive_model(model):
            return _instance_alias(hints) or settings.DEFAULT_METASTORE
        return None

    def db_for_write(self, model: type, **hints: Any) -> str | None:
        return self.db_for_read(model, **hints)

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool | None:
        if _is_hive_model(type(obj1)) or _is_hive_model(type(obj2)):
            return obj1._state.db == obj2._state.db
        return None

    def allow_migrate(self, db: str, app_label: str, model_name: str | None = None, **hints: Any) -> bool | None:
        if db in _metastore_aliases():
            return False
        return None


def _is_hive_model(model: type) -> bool:
    from catalog_admin.models import HiveModel

    return isinstance(model, type) and issubclass(model, HiveModel)


def _instance_alias(hints: dict[str, Any]) -> str | None:
    instance = hints.get("instance")
    return instance._state.db if instance is not None else None


def _metastore_aliases() -> set[str]:
    return {config.alias for config in settings.METASTORE_CONFIGS}
