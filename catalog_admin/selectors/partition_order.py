"""
The natural order of a table's partitions: by each key's value in key order, integral keys numerically
(``hour=2`` before ``hour=10``), as the key types in PARTITION_KEYS say.

A table whose keys are all non-integral keeps the order of ``PART_NAME`` (Hive's unique index ``UNIQUEPARTITION``
serves the keyset scan). With an integral key, each key's value is joined from PARTITION_KEY_VALS (its primary key
``(PART_ID, INTEGER_IDX)``) and turned into a text that sorts as the number does, so one set-based query with a
top-N sort serves every page (checked with EXPLAIN in ``tests/catalog_admin/test_partition_order.py``): a
non-negative value ``v`` is ``'1' || lpad(v, 19, '0')``, a negative one ``'0' || lpad(v + 10^18, 19, '0')``, anything
else (``__HIVE_DEFAULT_PARTITION__``) ``'2' || value``, after every number.
"""

from __future__ import annotations

from django.db.models import BigIntegerField, CharField, F, FilteredRelation, Q, QuerySet, Value
from django.db.models.expressions import Case, When
from django.db.models.functions import Cast, Coalesce, Concat, LPad, Substr

from catalog_admin.models import PartitionKey
from catalog_admin.selectors.sql_text import AllDigits

__all__ = ("INTEGRAL_TYPES", "NATURAL_ORDER_LIMIT", "is_natural", "natural_order", "sort_key_names")

INTEGRAL_TYPES = frozenset({"tinyint", "smallint", "int", "integer", "bigint"})
#: Above this many partitions in one table, pages follow PART_NAME (an index scan) instead of the natural order, whose
#: sort reads every partition of the table (about a second at 1,000,000 partitions: docs/benchmarks.md).
NATURAL_ORDER_LIMIT = 100_000
_WIDTH = 19
_NEGATIVE_OFFSET = 10**18


def _is_integral(key: PartitionKey) -> bool:
    return (key.type or "").strip().lower() in INTEGRAL_TYPES


def is_natural(keys: list[PartitionKey], partitions: int | None = None) -> bool:
    """Whether pages sort by key values: an integral key, and (when known) at most NATURAL_ORDER_LIMIT partitions."""
    return any(_is_integral(k) for k in keys) and (partitions is None or partitions <= NATURAL_ORDER_LIMIT)


def sort_key_names(keys: list[PartitionKey], partitions: int | None = None) -> tuple[str, ...]:
    """The annotated fields of :func:`natural_order` (``("name",)`` when the order is PART_NAME's)."""
    if not is_natural(keys, partitions):
        return ("name",)
    return (*(f"sort_{k.position}" for k in keys), "name")


def natural_order(qs: QuerySet, keys: list[PartitionKey], partitions: int | None = None) -> QuerySet:
    """``qs`` (partitions of one table) annotated with the sort fields of :func:`sort_key_names`."""
    if sort_key_names(keys, partitions) == ("name",):
        return qs
    annotations = {}
    for key in keys:
        relation = f"kv_{key.position}"
        qs = qs.alias(**{relation: FilteredRelation("key_values", condition=Q(key_values__position=key.position))})
        value = F(f"{relation}__value")
        text = Coalesce(value, Value(""), output_field=CharField())
        annotations[f"sort_{key.position}"] = _integral_sort_text(value) if _is_integral(key) else text
    return qs.annotate(**annotations)


def _integral_sort_text(value: F) -> Case:
    text = CharField()
    magnitude = Substr(value, 2)
    return Case(
        When(
            AllDigits(value, _WIDTH - 1),
            then=Concat(Value("1"), LPad(value, _WIDTH, Value("0")), output_field=text),
        ),
        When(
            Q(AllDigits(magnitude, _WIDTH - 2), **{f"{value.name}__startswith": "-"}),
            then=Concat(
                Value("0"),
                LPad(
                    Cast(Cast(value, BigIntegerField()) + Value(_NEGATIVE_OFFSET), text),
                    _WIDTH,
                    Value("0"),
                ),
                output_field=text,
            ),
        ),
        default=Concat(Value("2"), value, output_field=text),
        output_field=text,
    )
