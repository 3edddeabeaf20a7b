"""
The first rows of a table or a partition, read from its data files, bounded in rows, bytes and files.

Nothing loads a whole file: Parquet is read one record batch at a time (``ParquetFile.iter_batches``), ORC one stripe
at a time, Avro one record at a time (``fastavro.reader``), text one bounded line at a time, up to
:data:`MAX_TEXT_BYTES` a file. Text rows are split as Hive's LazySimpleSerDe does
(:mod:`catalog_admin.hive.text_format`). Files are those Hive reads:
hidden ones (``_``/``.`` prefixed, ``FileUtils.HIDDEN_FILES_PATH_FILTER``) are skipped.

Nothing outside the metastore's governed roots is read (``outside_roots``) and no symbolic link is followed, at any
level of a path (``symlink_refused``, naming the link): a viewer sees nothing of what a link points at.
"""

from __future__ import annotations

import base64
import datetime
import decimal
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.hive.locations import GovernedRoots, normalize_location
from catalog_admin.hive.partition_names import partition_values
from catalog_admin.hive.text_format import TextFormat, split_fields
from catalog_admin.locations import SymlinkRefused, local_files, open_local
from catalog_admin.models import Column, Partition, PartitionKey, SerDe, SerDeParam, Table
from catalog_admin.selectors.locations import governed_roots
from catalog_admin.selectors.metastores import Metastore

__all__ = (
    "DEFAULT_SAMPLE_ROWS",
    "MAX_SAMPLE_ROWS",
    "Sample",
    "SampleSource",
    "data_format",
    "read_sample",
    "sample_limit",
    "table_sample",
)

DEFAULT_SAMPLE_ROWS = 20
MAX_SAMPLE_ROWS = 500
MAX_FILES = 20  # data files opened for one sample
MAX_PARTITIONS = 20  # partitions visited for a partitioned table's sample
MAX_TEXT_BYTES = 1024 * 1024  # text read from one file
MAX_LINE_BYTES = 256 * 1024  # one text line (a longer one is cut there)
MAX_CELL_CHARACTERS = 500

_FORMATS = (  # (word in the input format or SerDe class, format)
    ("parquet", "parquet"),
    ("orc", "orc"),
    ("avro", "avro"),
    ("textinputformat", "text"),
    ("lazysimpleserde", "text"),
)


@dataclass(frozen=True)
class SampleSource:
    """Where a sample is read from: the format, the column names and the directories (with partition values)."""

    format: str
    columns: tuple[str, ...]
    directories: tuple[tuple[str, tuple[str | None, ...]], ...]  # (location, values of the partition keys)
    partition_keys: tuple[str, ...] = ()
    serde_params: dict[str, str | None] | None = None


@dataclass(frozen=True)
class Sample:
    columns: list[str]
    rows: list[list[Any]]
    files_read: int
    truncated: bool


def sample_limit(raw: str | None) -> int:
    """The ``limit`` parameter: 1 to :data:`MAX_SAMPLE_ROWS`, :data:`DEFAULT_SAMPLE_ROWS` when absent."""
    if raw in (None, ""):
        return DEFAULT_SAMPLE_ROWS
    try:
        limit = int(raw)
    except ValueError:
        limit = 0
    if not 1 <= limit <= MAX_SAMPLE_ROWS:
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            f"limit must be an integer between 1 and {MAX_SAMPLE_ROWS}, not '{raw}'.",
            {"parameter": "limit"},
        )
    return limit


def data_format(input_format: str | None, serde_lib: str | None) -> str | None:
    """parquet, orc, avro or text from the storage descriptor's classes; None when the console cannot read it."""
    for text in ((serde_lib or "").lower(), (input_format or "").lower()):
        for word, name in _FORMATS:
            if word in text:
                return name
    return None


def table_sample(
    metastore: Metastore, table: Table, keys: list[PartitionKey], *, limit: int, partition: Partition | None = None
) -> Sample:
    """The first ``limit`` rows of ``table`` (or of one of its partitions), columns as the table declares them."""
    sd = partition.sd if partition is not None else table.sd
    if sd is None:
        raise _unreadable(f"{table.name} has no storage descriptor: it holds no files.")
    columns = tuple(
        Column.objects.using(metastore.alias)
        .filter(cd_id=table.sd.cd_id)
        .order_by("position")
        .values_list("name", flat=True)
    )
    serde_params = dict(
        SerDeParam.objects.using(metastore.alias).filter(serde_id=sd.serde_id).values_list("key", "value")
    )
    # Only SLIB: SERDES has version-dependent columns (DESCRIPTION …) a whole-row read would name.
    serde_lib = SerDe.objects.using(metastore.alias).filter(id=sd.serde_id).values_list("slib", flat=True).first()
    fmt = data_format(sd.input_format, serde_lib)
    if fmt is None:
        raise _unreadable(
            f"The console cannot read {sd.input_format or 'this format'} "
            f"(SerDe {serde_lib or 'none'}); it reads Parquet, ORC, Avro and text."
        )
    directories = _directories(metastore, table, keys, partition)
    _refuse_outside(governed_roots(metastore), [location for location, _values in directories])
    source = SampleSource(
        format=fmt,
        columns=columns,
        directories=directories,
        partition_keys=tuple(k.name for k in keys),
        serde_params=serde_params,
    )
    return read_sample(source, limit=limit)


def _refuse_outside(roots: GovernedRoots, locations: list[str]) -> None:
    """OUTSIDE_ROOTS naming the first location that is not a governed root or inside one."""
    outside = next((location for location in locations if location and not roots.contains(location)), None)
    if outside is not None:
        raise ApplicationError(
            ErrorCode.OUTSIDE_ROOTS,
            f"{outside} is outside the directories this console governs ({roots.describe()}): it is not read.",
            {"location": outside},
        )


def _directories(
    metastore: Metastore, table: Table, keys: list[PartitionKey], partition: Partition | None
) -> tuple[tuple[str, tuple[str | None, ...]], ...]:
    if partition is not None:
        return ((partition.sd.location or "", tuple(partition_values(partition.name or ""))),)
    if not keys:
        return ((table.sd.location or "", ()),)
    rows = (  # the newest partitions first: where the data usually is
        Partition.objects.using(metastore.alias)
        .filter(table_id=table.id)
        .order_by("-name")
        .values_list("name", "sd__location")[:MAX_PARTITIONS]
    )
    return tuple((location or "", tuple(partition_values(name or ""))) for name, location in rows)


def read_sample(source: SampleSource, *, limit: int) -> Sample:
    """Read up to ``limit`` rows from ``source``'s directories in order; raises NO_DATA_FILES or UNREADABLE_DATA."""
    columns = [*source.columns, *source.partition_keys]
    rows: list[list[Any]] = []
    files = 0
    for location, values in source.directories:
        for path in islice(_data_files(location), MAX_FILES - files):
            files += 1
            try:
                for row in _read_file(source, path, limit - len(rows)):
                    rows.append([_json_value(v) for v in row] + list(values))
            except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
                raise _unreadable(
                    f"{path.name} is not readable as {source.format}: {str(exc).splitlines()[0]}"
                ) from exc
            if len(rows) >= limit or files >= MAX_FILES:
                return Sample(columns, rows[:limit], files, truncated=len(rows) >= limit)
    if files == 0:
        raise ApplicationError(
            ErrorCode.NO_DATA_FILES,
            "No data files were found under " + ", ".join(loc for loc, _ in source.directories[:3] or [("—", ())]),
            {"locations": [loc for loc, _ in source.directories[:MAX_PARTITIONS]]},
        )
    return Sample(columns, rows, files, truncated=False)


def _unreadable(message: str) -> ApplicationError:
    return ApplicationError(ErrorCode.UNREADABLE_DATA, message)


def _data_files(location: str) -> Iterator[Path]:
    """The files Hive would read under ``location`` (recursively, sorted, hidden ones skipped); local only. A
    symbolic link (in the directory, or on the way to it) is SYMLINK_REFUSED naming it, never followed."""
    if not location:
        return
    parts = urlsplit(normalize_location(location))
    if parts.scheme != "file":
        raise _unreadable(f"The console has no client for {parts.scheme}: it cannot read {location}.")
    try:
        for entry in local_files(location, skip_hidden=True):
            if entry.symlink:
                raise _symlink(entry.location)
            yield Path(urlsplit(entry.location).path)
    except SymlinkRefused as refused:
        raise _symlink(normalize_location(str(refused.filename))) from None
    except NotADirectoryError:
        return


def _symlink(location: str) -> ApplicationError:
    return ApplicationError(
        ErrorCode.SYMLINK_REFUSED,
        f"{location} is a symbolic link: the console never follows one, so this data is not read.",
        {"location": location},
    )


def _read_file(source: SampleSource, path: Path, limit: int) -> Iterator[list[Any]]:
    reader = {"parquet": _parquet_rows, "orc": _orc_rows, "avro": _avro_rows, "text": _text_rows}[source.format]
    yield from islice(reader(source, path), max(limit, 0))


def _by_name(names: list[str], columns: tuple[str, ...]) -> list[int | None]:
    """The file's field for each table column: by name (case-insensitive), else by position (ORC's ``_col0``)."""
    lowered = [n.lower() for n in names]
    if any(c.lower() in lowered for c in columns):
        return [lowered.index(c.lower()) if c.lower() in lowered else None for c in columns]
    return [i if i < len(names) else None for i in range(len(columns))]


def _arrow_rows(batches: Iterator[Any], names: list[str], columns: tuple[str, ...]) -> Iterator[list[Any]]:
    positions = _by_name(names, columns)
    for batch in batches:
        values = [batch.column(p).to_pylist() if p is not None else None for p in positions]
        for i in range(batch.num_rows):
            yield [v[i] if v is not None else None for v in values]


def _parquet_rows(source: SampleSource, path: Path) -> Iterator[list[Any]]:
    import pyarrow.parquet as pq

    with open_local(path) as handle, pq.ParquetFile(handle) as parquet:
        yield from _arrow_rows(parquet.iter_batches(batch_size=256), parquet.schema_arrow.names, source.columns)


def _orc_rows(source: SampleSource, path: Path) -> Iterator[list[Any]]:
    import pyarrow.orc as orc

    with open_local(path) as handle:
        reader = orc.ORCFile(handle)
        stripes = (reader.read_stripe(i) for i in range(reader.nstripes))
        yield from _arrow_rows(stripes, reader.schema.names, source.columns)


def _avro_rows(source: SampleSource, path: Path) -> Iterator[list[Any]]:
    import fastavro

    with open_local(path) as handle:
        for record in fastavro.reader(handle):
            names = list(record)
            positions = _by_name(names, source.columns)
            yield [record[names[p]] if p is not None else None for p in positions]


def _text_rows(source: SampleSource, path: Path) -> Iterator[list[Any]]:
    text = TextFormat.from_serde_params(source.serde_params or {})
    read = 0
    with open_local(path) as handle:
        while read < MAX_TEXT_BYTES and (raw := handle.readline(MAX_LINE_BYTES)):
            read += len(raw)
            if not raw.endswith(b"\n"):  # a line longer than MAX_LINE_BYTES: skip its rest
                while read < MAX_TEXT_BYTES and (rest := handle.readline(MAX_LINE_BYTES)):
                    read += len(rest)
                    if rest.endswith(b"\n"):
                        break
            line = raw.decode("utf-8", errors="replace").rstrip("\n").removesuffix("\r")
            yield split_fields(line, text, len(source.columns))


def _json_value(value: Any) -> Any:
    """A cell as JSON can carry it: dates and decimals as text, bytes as base64, long text cut."""
    if isinstance(value, str):
        return value if len(value) <= MAX_CELL_CHARACTERS else value[:MAX_CELL_CHARACTERS] + "…"
    if isinstance(value, (datetime.date, datetime.time, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, (decimal.Decimal, datetime.timedelta)):
        return str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value[:MAX_CELL_CHARACTERS]).decode()
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    return value
