"""
The unfiltered pages of a big table's partitions in their natural order, from a remembered order.

Sorting 100,000 partitions by their key values costs a whole pass over them (a top-N sort over every row: no index
holds the natural order), which a page must not pay on every view. The order is read once (the partitions' ids,
sorted by the database exactly as :func:`~catalog_admin.selectors.partition_order.natural_order` sorts them) and kept
under the table's partition stamp (:mod:`catalog_admin.selectors.table_aggregates`); a page is then the next ``size``
ids after the cursor's partition (found by its unique name), read by primary key, with the same fields and cursor as
:func:`~catalog_admin.selectors.pagination.keyset_page` gives. A cursor whose partition is gone from the remembered
order falls back to the keyset page (``None``).
"""

from __future__ import annotations

from array import array
from typing import Any

from catalog_admin.models import Partition, PartitionKey, Table
from catalog_admin.selectors.metastores import Metastore
from catalog_admin.selectors.pagination import Page, decode_cursor, encode_cursor
from catalog_admin.selectors.partition_order import natural_order, sort_key_names
from catalog_admin.selectors.table_aggregates import partition_stamp, remembered

__all__ = ("remembered_natural_page",)


def remembered_natural_page(
    metastore: Metastore, table: Table, keys: list[PartitionKey], cursor: str, size: int, fields: tuple[str, ...]
) -> Page[dict[str, Any]] | None:
    """One page of ``table``'s partitions (unfiltered) after ``cursor``; None when the cursor's partition is not in
    the remembered order (then the caller pages by keyset)."""
    stamp = partition_stamp(metastore, table)
    order = sort_key_names(keys, stamp.count)
    ids = remembered(
        metastore, table, "natural-order", stamp, lambda: _ordered_ids(metastore, table, keys, stamp.count, order)
    )
    start = _position_after(metastore, table, ids.value, cursor, len(order))
    if start is None:
        return None
    wanted = ids.value[start : start + size]
    rows = _rows_by_id(metastore, table, keys, stamp.count, list(wanted), fields)
    more = start + size < len(ids.value)
    next_cursor = encode_cursor([rows[-1][k] for k in order]) if more and rows else ""
    return Page(items=rows, next_cursor=next_cursor)


def _ordered_ids(
    metastore: Metastore, table: Table, keys: list[PartitionKey], partitions: int, order: tuple[str, ...]
) -> array:
    """Every partition's id in the natural order (one sorted read)."""
    qs = Partition.objects.using(metastore.alias).filter(table_id=table.id)
    ordered = natural_order(qs, keys, partitions).order_by(*order).values_list("id", flat=True)
    return array("q", list(ordered))  # a plain read (no server-side cursor): the browser only SELECTs


def _position_after(metastore: Metastore, table: Table, ids: array, cursor: str, fields: int) -> int | None:
    """Where the page after ``cursor`` starts in ``ids`` (0 without a cursor; None when its partition is not there)."""
    after = decode_cursor(cursor, types=(str,) * fields)
    if after is None:
        return 0
    name = after[-1]  # the last sort field is PART_NAME, unique within the table
    found = Partition.objects.using(metastore.alias).filter(table_id=table.id, name=name).values_list("id", flat=True)
    partition_id = next(iter(found), None)
    if partition_id is None:
        return None
    try:
        return ids.index(partition_id) + 1
    except ValueError:
        return None


def _rows_by_id(
    metastore: Metastore,
    table: Table,
    keys: list[PartitionKey],
    partitions: int,
    wanted: list[int],
    fields: tuple[str, ...],
) -> list[dict[str, Any]]:
    """The rows of ``wanted`` (by primary key), in that order, with their sort fields."""
    qs = Partition.objects.using(metastore.alias).filter(table_id=table.id, id__in=wanted)
    by_id = {row["id"]: row for row in natural_order(qs, keys, partitions).values(*fields)}
    return [by_id[i] for i in wanted if i in by_id]
