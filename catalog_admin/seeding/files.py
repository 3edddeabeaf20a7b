"""Real data files under the warehouse for the demo tables, and the column statistics computed from them."""

from __future__ import annotations

import io
import random
from collections.abc import Sequence as Seq
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.db import models

from catalog_admin.models import PartitionColumnStatistics
from catalog_admin.seeding.content import WORDS, TableSpec
from catalog_admin.seeding.context import Context

__all__ = ("encode_rows", "generate_rows", "plan_column_stats", "write_files")


def generate_rows(
    rng: random.Random, columns: Seq[tuple[str, str]], count: int, when: tuple[str, int]
) -> list[tuple[Any, ...]]:
    start = rng.randint(1, 10_000)
    return [tuple(_value(rng, name, type_name, start + i, when) for name, type_name in columns) for i in range(count)]


def _value(rng: random.Random, name: str, type_name: str, serial: int, when: tuple[str, int]) -> Any:
    if type_name in ("int", "bigint"):
        if name in ("id", "payment_id", "click_id", "job_id"):
            return serial
        return rng.randint(1, 500) if name.endswith("id") else rng.randint(10, 90_000)
    if type_name == "double" or type_name.startswith("decimal"):
        return round(rng.uniform(0.5, 900), 2)
    if type_name == "boolean":
        return rng.random() < 0.8
    if type_name == "date":
        return (date(2023, 1, 1) + timedelta(days=rng.randint(0, 364))).isoformat()
    if type_name == "timestamp":
        return f"{when[0]} {when[1]:02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
    if name == "email":
        return f"user{serial}@example.com"
    return rng.choice(WORDS.get(name, ("alpha", "beta", "gamma", "delta")))


def write_files(
    ctx: Context, spec: TableSpec, directory: Path, data: list[tuple[Any, ...]], *, write: bool
) -> tuple[int, int, int]:
    """
    Write ``data`` as Hive-named files under ``directory`` (unless ``write`` is false): files, bytes, rows.

    Files are in the table's declared format: Parquet and ORC through pyarrow, text as LazySimpleSerDe reads it with
    the ``,`` delimiter of ``FORMATS["text"]``. ACID tables get one delta directory per committed write id (plain ORC
    rows: the sample reads them; Hive's ACID row struct is not reproduced).
    """
    if spec.acid:
        half = len(data) // 2
        files = {
            "delta_0000001_0000001_0000/bucket_00000": data[:half],
            "delta_0000002_0000002_0000/bucket_00000": data[half:],
        }
    else:
        files = {"000000_0": data}
    size = 0
    for relative, rows in files.items():
        content = encode_rows(spec.fmt, spec.columns, rows)
        size += len(content)
        if write:
            path = directory / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
            ctx.files += 1
    return len(files), size, len(data)


def encode_rows(fmt: str, columns: Seq[tuple[str, str]], rows: Seq[tuple[Any, ...]]) -> bytes:
    """The bytes of one data file holding ``rows`` in format ``fmt`` (parquet, orc, else comma-separated text)."""
    if fmt not in ("parquet", "orc"):
        return "".join(
            ",".join(str(v).lower() if isinstance(v, bool) else str(v) for v in row) + "\n" for row in rows
        ).encode()
    import pyarrow as pa
    import pyarrow.orc as orc
    import pyarrow.parquet as pq

    arrays = {
        name: pa.array([_arrow_value(type_name, row[i]) for row in rows], _arrow_type(type_name))
        for i, (name, type_name) in enumerate(columns)
    }
    buffer = io.BytesIO()
    table = pa.table(arrays)
    if fmt == "parquet":
        pq.write_table(table, buffer)
    else:
        orc.write_table(table, buffer)
    return buffer.getvalue()


def _arrow_type(type_name: str) -> Any:
    import pyarrow as pa

    if type_name.startswith("decimal"):
        precision, scale = (int(n) for n in type_name[len("decimal(") : -1].split(","))
        return pa.decimal128(precision, scale)
    return {
        "int": pa.int32(),
        "bigint": pa.int64(),
        "double": pa.float64(),
        "boolean": pa.bool_(),
        "date": pa.date32(),
        "timestamp": pa.timestamp("us"),
    }.get(type_name, pa.string())


def _arrow_value(type_name: str, value: Any) -> Any:
    if type_name.startswith("decimal"):
        return Decimal(str(value))
    if type_name == "date":
        return date.fromisoformat(value)
    if type_name == "timestamp":
        return datetime.fromisoformat(value)
    return value


def plan_column_stats(
    ctx: Context, model: type[models.Model], spec: TableSpec, data: list[tuple[Any, ...]], **owner: Any
) -> None:
    space = "MPartitionColumnStatistics" if model is PartitionColumnStatistics else "MTableColumnStatistics"
    for index, (name, type_name) in enumerate(spec.columns):
        ctx.add(
            model,
            id=ctx.plan.take(space),
            catalog_name=ctx.catalog,
            db_name=spec.database,
            table_name=spec.name,
            column_name=name,
            column_type=type_name,
            num_nulls=0,
            last_analyzed=ctx.now,
            engine="hive",
            **_stats_values(type_name, [row[index] for row in data]),
            **owner,
        )


def _stats_values(type_name: str, values: list[Any]) -> dict[str, Any]:
    """Column statistics computed from the generated values, in the columns Hive uses for the type."""
    ndv = {"num_distincts": len(set(values))}
    if type_name == "boolean":
        return {"num_trues": sum(values), "num_falses": len(values) - sum(values)}
    if type_name.startswith("decimal"):
        return ndv | {"big_decimal_low_value": f"{min(values):.2f}", "big_decimal_high_value": f"{max(values):.2f}"}
    if type_name == "double":
        return ndv | {"double_low_value": min(values), "double_high_value": max(values)}
    if type_name == "date":
        values = [(date.fromisoformat(v) - date(1970, 1, 1)).days for v in values]
    elif type_name == "timestamp":
        values = [int(datetime.fromisoformat(f"{v}+00:00").timestamp()) for v in values]
    if type_name in ("int", "bigint", "date", "timestamp"):
        return ndv | {"long_low_value": min(values), "long_high_value": max(values)}
    lengths = [len(str(v)) for v in values]
    return ndv | {"avg_col_len": sum(lengths) / len(lengths), "max_col_len": max(lengths)}
