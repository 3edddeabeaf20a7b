"""
Hive's partition names: ``Warehouse.makePartName`` and ``FileUtils.escapePathName`` / ``unescapePathName``
(``org.apache.hadoop.hive.common.FileUtils`` and the metastore's copy,
``org.apache.hadoop.hive.metastore.utils.FileUtils``), identical in 2.3, 3.1 and 4.0.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ("HIVE_DEFAULT_PARTITION", "escape_path_name", "partition_name", "partition_values", "unescape_path_name")

HIVE_DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
# FileUtils.charToEscape: 0x00-0x1F and the characters special in paths and URIs. Everything else (spaces, non-ASCII
# letters such as é) stays as it is.
_ESCAPED = frozenset(map(chr, range(0x20))) | frozenset("\"#%'*/:=?\\\x7f{[]^")
# What unescapePathName's Integer.parseInt(two characters, 16) reads as a number >= 0.
_ESCAPE_SEQUENCE = re.compile(r"%([0-9A-Fa-f]{2}|\+[0-9A-Fa-f])")


def partition_name(spec: Iterable[tuple[str, str | None]]) -> str:
    """
    Hive's ``Warehouse.makePartName`` for ``[(key, value), …]`` in key order: ``dt=2024-01-01/hour=3``, the keys
    lower-cased, keys and values escaped by ``escape_path_name``.
    """
    return "/".join(f"{escape_path_name(key.lower())}={escape_path_name(value)}" for key, value in spec)


def escape_path_name(value: str | None) -> str:
    """
    Hive's ``FileUtils.escapePathName``: ``%`` and two upper-case hex digits for each character of its escape set;
    an empty or missing value is ``__HIVE_DEFAULT_PARTITION__``.
    """
    if not value:
        return HIVE_DEFAULT_PARTITION
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in value)


def unescape_path_name(name: str) -> str:
    """Hive's ``FileUtils.unescapePathName``: ``%`` and two hex digits become that character; any other ``%`` stays."""
    return _ESCAPE_SEQUENCE.sub(lambda match: chr(int(match.group(1), 16)), name)


def partition_values(name: str) -> tuple[str, ...]:
    """Values from a partition name ``dt=2024-01-01/hour=3``, unescaped as Hive does (``unescape_path_name``)."""
    return tuple(unescape_path_name(part.partition("=")[2]) for part in name.split("/"))
