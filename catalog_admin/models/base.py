"""Base class, queryset and field types shared by the unmanaged Hive metastore models."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self

from django.db import models

if TYPE_CHECKING:
    from catalog_admin.selectors.metastores import Metastore

__all__ = ("HiveBooleanField", "HiveModel", "HiveQuerySet", "hive_fk")


class HiveQuerySet(models.QuerySet):
    """A queryset bound to one metastore, deferring the columns its schema version lacks."""

    def on(self, metastore: Metastore, *related: str) -> Self:
        """Read from ``metastore``; ``related`` names select_related paths whose missing columns to defer too."""
        deferred = list(metastore.schema.missing_fields(self.model))
        for path in related:
            model = self.model
            for step in path.split("__"):
                model = model._meta.get_field(step).related_model
            deferred += [f"{path}__{name}" for name in metastore.schema.missing_fields(model)]
        qs = super().using(metastore.alias)
        if related:
            qs = qs.select_related(*related)
        return qs.defer(*deferred) if deferred else qs

    def using(self, alias: str | None) -> Self:
        """Like Django's, and on a metastore also defer the model's columns its schema version lacks.

        So ``Model.objects.using(alias).get(…)`` never selects a column that is not there (e.g. ``WRITE_ID``
        on Hive 2.3); ``on(metastore, *related)`` additionally covers select_related models.
        """
        qs = super().using(alias)
        if alias is None or not _has_versioned_fields(self.model):
            return qs
        from catalog_admin.selectors.metastores import get_metastore, is_metastore_alias

        if not is_metastore_alias(alias):
            return qs
        missing = get_metastore(alias).schema.missing_fields(self.model)
        return qs.defer(*missing) if missing else qs


def _has_versioned_fields(model: type[models.Model]) -> bool:
    return any(hasattr(f, "hive_since") for f in model._meta.concrete_fields)


class HiveModel(models.Model):
    """An unmanaged model mirroring one table of Hive's metastore schema."""

    objects = HiveQuerySet.as_manager()

    class Meta:
        abstract = True
        managed = False


class HiveBooleanField(models.BooleanField):
    """A boolean stored as PostgreSQL ``boolean``, MySQL ``BIT(1)`` or SQLite integer."""

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> bool | None:
        if value is None:
            return None
        if isinstance(value, bytes | bytearray):
            return any(value)
        return bool(value)


def hive_fk(to: str, column: str, *, related_name: str = "+", null: bool = True, **kwargs: Any) -> models.ForeignKey:
    """A foreign key to another metastore table, without constraints or cascades of its own."""
    return models.ForeignKey(
        to,
        db_column=column,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name=related_name,
        null=null,
        **kwargs,
    )
