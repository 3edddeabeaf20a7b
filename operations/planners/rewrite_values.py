"""
What a rewrite carries value for value, and the settings it cannot carry: each a blocker naming the setting and why.

The rewrite program (``operations/spark/programs/rewrite.py``) carries exactly:

* compaction of text: the files concatenated byte for byte (a missing last newline added), whatever the SerDe's
  delimiters, escape character or null format; uncompressed files only;
* compaction of Parquet, ORC and Avro: the rows as Spark or fastavro read them;
* conversion from text and SequenceFile: each line split at LazySimpleSerDe's field separator (``field.delim``, else
  ``serialization.format``), the null format (``serialization.null.format``) read as NULL, complex values split at
  ``collection.delim``/``mapkey.delim`` (``lazy_text.py``), all with the table's SerDe parameters.

Everything else is refused by the preview, an allow-list rather than a list of known gaps: a SerDe parameter the
program does not implement (``escape.delim``, ``timestamp.formats``, another encoding, …), a partition whose SerDe
parameters differ from the table's (the program reads every partition with the table's), the header and footer lines
Hive skips in every file (``skip.header.line.count``/``skip.footer.line.count``: merged files would turn them into
rows, converted files keep them as rows), compressed text, and text columns of a type Spark's casts read otherwise
than LazySimpleSerDe (the conversion parses values with ``try_cast``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from catalog_admin.hive.sequence_file import SequenceFileError, codec
from catalog_admin.locations import filesystem_for
from catalog_admin.models import SerDeParam
from catalog_admin.selectors.metastores import Metastore
from operations.planners.partitions.chunks import chunks
from operations.rules import Finding
from operations.table_state import TableState

__all__ = ("COUNTED_LINES", "value_blockers")

RULE = "rewrite"
COUNTED_LINES = ("skip.header.line.count", "skip.footer.line.count")
COMPRESSED_SUFFIXES = (".gz", ".bz2", ".deflate", ".snappy", ".lz4", ".zst", ".lzo")  # the program's COMPRESSED_TEXT
TEXT_SOURCES = ("text", "sequencefile")
# LazySimpleSerDe's parameters a conversion carries (with the values it carries), and those that change nothing Hive
# reads (Spark's path; escape.crlf acts only with escape.delim, which is refused).
_ANY: Callable[[str], bool] = lambda _value: True  # noqa: E731 - a table of predicates
CARRIED_TEXT_PARAMS: dict[str, Callable[[str], bool]] = {
    "field.delim": _ANY,
    "serialization.format": _ANY,
    "collection.delim": _ANY,
    "colelction.delim": _ANY,  # Hive 2's misspelt key
    "mapkey.delim": _ANY,
    "serialization.null.format": _ANY,
    "serialization.escape.crlf": _ANY,
    "path": _ANY,
    "line.delim": lambda value: value in ("\n", "10"),  # the only line end LazySimpleSerDe accepts
    "serialization.encoding": lambda value: value.strip().lower().replace("-", "") in ("utf8", ""),
    "serialization.last.column.takes.rest": lambda value: value.strip().lower() != "true",
}
# Text column types whose values Spark's casts read exactly as LazySimpleSerDe does (strings are taken as they are).
EXACT_TEXT_TYPES = frozenset({"string", "varchar", "char"})
_COMPLEX_WORDS = frozenset({"array", "map", "struct", "uniontype"})


def value_blockers(
    metastore: Metastore, state: TableState, *, convert: bool, rows: list[dict], files: dict[str, list]
) -> list[Finding]:
    """Why the rewrite of ``rows`` (``{serde_id, location, format}``, the format as ``source_format`` names it) would
    not give Hive's readers the same values; ``files``: the listed files by location."""
    partition_params = _serde_params(metastore, [r["serde_id"] for r in rows if r["id"] is not None])
    blockers = _counted_lines_blockers(state, partition_params)
    text_rows = [r for r in rows if r["format"] in TEXT_SOURCES]
    if not text_rows:
        return blockers
    if not convert:
        return blockers + _compressed_blockers(text_rows, files)
    partitions = [partition_params.get(r["serde_id"], {}) for r in text_rows if r["id"] is not None]
    blockers += _text_param_blockers(state, partitions)
    blockers += _sequence_file_blockers(metastore, [r for r in text_rows if r["format"] == "sequencefile"], files)
    return blockers + _text_type_blockers(state)


def _serde_params(metastore: Metastore, serde_ids: list[int]) -> dict[int, dict[str, str]]:
    """The SerDe parameters of the partitions' SerDes, by SERDE_ID, in chunked set-based reads."""
    found: dict[int, dict[str, str]] = {}
    for chunk in chunks(sorted({i for i in serde_ids if i is not None})):
        rows = SerDeParam.objects.using(metastore.alias).filter(serde_id__in=chunk)
        for serde_id, key, value in rows.values_list("serde_id", "key", "value"):
            found.setdefault(serde_id, {})[key] = value or ""
    return found


def _counted_lines_blockers(state: TableState, partition_params: dict[int, dict[str, str]]) -> list[Finding]:
    """Header and footer lines Hive skips in every file (a table property, or a SerDe parameter of the table or of a
    partition: Hive reads them from the merged properties)."""
    settings = [state.params, state.serde_params, *partition_params.values()]
    blockers = []
    for key in COUNTED_LINES:
        value = next((s[key] for s in settings if _positive(s.get(key))), None)
        if value is not None:
            blockers.append(
                Finding(
                    "skipped_lines",
                    RULE,
                    f"{key}={value}: Hive skips that many lines of every file of {state.ref.database}."
                    f"{state.ref.table}, which the rewrite cannot carry (merged files would turn the skipped lines "
                    "of all but one file into rows, converted files would keep them as rows). Remove the header or "
                    "footer lines first.",
                )
            )
    return blockers


def _positive(value: str | None) -> bool:
    try:
        return int((value or "0").strip()) > 0
    except ValueError:
        return False


def _compressed_blockers(rows: list[dict], files: dict[str, list]) -> list[Finding]:
    compressed = [f.relative for r in rows for f in files.get(r["location"], []) if _is_compressed(f.relative)]
    if not compressed:
        return []
    return [
        Finding(
            "compressed_text",
            RULE,
            f"{len(compressed)} text file(s) are compressed (first: {compressed[0]}): the console concatenates "
            "uncompressed text only (compressed streams cannot be joined line by line).",
        )
    ]


def _sequence_file_blockers(metastore: Metastore, rows: list[dict], files: dict[str, list]) -> list[Finding]:
    """SequenceFiles the program cannot read, named with the reason from their headers (a compressed one with its
    codec): found here, before approval, rather than failing the job."""
    unreadable: dict[str, list[str]] = {}
    for entry in (f for r in rows for f in files.get(r["location"], [])):
        reason = _sequence_file_problem(metastore, entry.location)
        if reason:
            unreadable.setdefault(reason, []).append(entry.location)
    return [
        Finding(
            "sequence_file_not_read",
            RULE,
            f"{len(paths)} SequenceFile(s) {reason} (first: {paths[0]}): the console converts uncompressed "
            "SequenceFiles of Text values only. Rewrite them uncompressed with Hive (SET hive.exec.compress.output="
            "false; INSERT OVERWRITE) first.",
        )
        for reason, paths in sorted(unreadable.items())
    ]


def _sequence_file_problem(metastore: Metastore, location: str) -> str:
    """Why the file cannot be converted (``""``: it can), from its header only."""
    try:
        with filesystem_for(location, metastore.name).open(location, "rb") as stream:
            found = codec(stream)
    except SequenceFileError as exc:
        return f"cannot be read: {exc}"
    return f"are compressed with {found}" if found else ""


def _is_compressed(name: str) -> bool:
    return name.lower().endswith(COMPRESSED_SUFFIXES)


def _text_param_blockers(state: TableState, partition_params: list[dict[str, str]]) -> list[Finding]:
    """SerDe parameters the conversion does not implement, and partitions whose carried parameters differ from the
    table's (the program reads every partition with the table's)."""
    table = {k: v or "" for k, v in state.serde_params.items()}
    blockers = []
    uncarried = {
        key: value
        for params in (table, *partition_params)
        for key, value in params.items()
        if key not in COUNTED_LINES and not CARRIED_TEXT_PARAMS.get(key, lambda _v: False)(value)
    }
    for key, value in sorted(uncarried.items()):
        blockers.append(
            Finding(
                "text_setting_not_carried",
                RULE,
                f"SerDe parameter {key}={value!r}: the conversion does not implement it (it reads field.delim, "
                "serialization.format, collection.delim, mapkey.delim and serialization.null.format, UTF-8, one row "
                "per line), so the converted values could differ from what Hive reads.",
            )
        )
    differing = [p for p in partition_params if _carried(p) != _carried(table)]
    if differing:
        blockers.append(
            Finding(
                "partition_text_settings_differ",
                RULE,
                f"{len(differing)} partition(s) have other text SerDe parameters than the table (first: "
                f"{_carried(differing[0])}): the conversion reads every partition with the table's.",
            )
        )
    return blockers


def _carried(params: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in sorted(params.items()) if k in CARRIED_TEXT_PARAMS and k != "path"}


def _text_type_blockers(state: TableState) -> list[Finding]:
    inexact = [c for c in state.columns if not _leaf_types(c.type) <= EXACT_TEXT_TYPES]
    if not inexact:
        return []
    named = ", ".join(f"{c.name} {c.type}" for c in inexact[:5]) + (" …" if len(inexact) > 5 else "")
    return [
        Finding(
            "text_values_not_exact",
            RULE,
            f"{len(inexact)} column(s) are not strings ({named}): the conversion parses text values with Spark's "
            "casts, which read some values otherwise than LazySimpleSerDe (' 2' and '3.7' in an integer column, "
            "'yes' in a boolean, 2024-02-30 in a date, nanoseconds in a timestamp, base64 in a binary), so rows "
            "could change. Only string, varchar and char columns are carried exactly.",
        )
    ]


def _leaf_types(hive_type: str) -> set[str]:
    """The primitive type names in a (possibly nested) Hive type, struct field names and lengths left out."""
    without_fields = re.sub(r"[\w$]+\s*:", "", hive_type.lower())
    words = set(re.findall(r"[a-z_]+", re.sub(r"\([^)]*\)", "", without_fields)))
    return words - _COMPLEX_WORDS
