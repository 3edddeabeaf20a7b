"""The partitions a ``DROP PARTITION`` names: by exact spec, by ranges of values and by several specs; ranges on
integer keys compare as numbers."""

from __future__ import annotations

from django.db.models import BigIntegerField, Exists, OuterRef, Q
from django.db.models.functions import Cast

from catalog_admin.models import Partition, PartitionKeyValue
from catalog_admin.selectors.metastores import Metastore
from operations.rules import Finding
from operations.specs import DropPartitions, PartitionPredicate
from operations.table_state import TableState

__all__ = ("INTEGRAL_TYPES", "matching_partitions", "predicate_blockers")

INTEGRAL_TYPES = frozenset({"tinyint", "smallint", "int", "integer", "bigint"})


def predicate_blockers(state: TableState, spec: DropPartitions) -> list[Finding]:
    """The table must be partitioned, and the predicates may name only its partition keys."""
    keys = {k.name for k in state.partition_keys}
    if not keys:
        return [Finding("not_partitioned", "ddl", f"Table {state.ref} is not partitioned")]
    unknown = sorted({p.key for predicates in spec.specs for p in predicates} - keys)
    if unknown:
        return [
            Finding(
                "unknown_partition_key",
                "ddl",
                f"{', '.join(unknown)} is not a partition key of {state.ref}; keys: {', '.join(sorted(keys))}",
            )
        ]
    return []


def matching_partitions(metastore: Metastore, state: TableState, spec: DropPartitions) -> list[dict]:
    """The partitions any of the specs matches (all of its predicates), by name, with their storage descriptors."""
    alias = metastore.alias
    keys = {k.name: (i, k.type) for i, k in enumerate(state.partition_keys)}
    condition = Q()
    for predicates in spec.specs:
        condition |= _all_of(alias, keys, predicates)
    rows = (
        Partition.objects.using(alias)
        .filter(table_id=state.table_id)
        .filter(condition)
        .order_by("name")
        .values("id", "name", "sd_id", "sd__location", "sd__serde_id", "sd__cd_id")
    )
    return list(rows)


def _all_of(alias: str, keys: dict[str, tuple[int, str]], predicates: tuple[PartitionPredicate, ...]) -> Q:
    condition = Q()
    for predicate in predicates:
        position, key_type = keys[predicate.key]
        values = PartitionKeyValue.objects.using(alias).filter(partition_id=OuterRef("id"), position=position)
        if key_type.lower() in INTEGRAL_TYPES and _is_integer(predicate.value):
            values = values.annotate(number=Cast("value", BigIntegerField()))
            values = (
                values.filter(**{f"number{_LOOKUPS[predicate.op]}": int(predicate.value)})
                if predicate.op != "<>"
                else values.exclude(number=int(predicate.value))
            )
        else:
            values = (
                values.filter(**{f"value{_LOOKUPS[predicate.op]}": predicate.value})
                if predicate.op != "<>"
                else values.exclude(value=predicate.value)
            )
        condition &= Q(Exists(values))
    return condition


_LOOKUPS = {"=": "", "<": "__lt", "<=": "__lte", ">": "__gt", ">=": "__gte"}


def _is_integer(value: str) -> bool:
    return value.lstrip("-").isdigit()
