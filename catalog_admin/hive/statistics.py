"""
Hive's statistics parameters: the basic statistics keys and the ``COLUMN_STATS_ACCURATE`` flags
(``StatsSetupConst``: ``{"BASIC_STATS":"true","COLUMN_STATS":{"id":"true"}}``, written compact).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

__all__ = (
    "BASIC_STAT_KEYS",
    "COLUMN_STATS_ACCURATE",
    "accurate_flags",
    "int_param",
    "parse_stats_accurate",
    "stats_freshness",
)

# StatsSetupConst.COLUMN_STATS_ACCURATE: the table or partition parameter holding the flags.
COLUMN_STATS_ACCURATE = "COLUMN_STATS_ACCURATE"
BASIC_STAT_KEYS = ("numFiles", "totalSize", "numRows", "rawDataSize")


def parse_stats_accurate(raw: str | None) -> dict[str, Any]:
    """``COLUMN_STATS_ACCURATE`` as a dict: ``{"BASIC_STATS": "true", "COLUMN_STATS": {"id": "true"}}``."""
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def accurate_flags(columns: Iterable[str] = ()) -> str:
    """The value Hive writes when basic statistics, and column statistics of ``columns``, are accurate."""
    value: dict[str, Any] = {"BASIC_STATS": "true"}
    names = list(columns)
    if names:
        value["COLUMN_STATS"] = dict.fromkeys(names, "true")
    return json.dumps(value, separators=(",", ":"))


def stats_freshness(raw: str | None) -> str:
    """``fresh`` when Hive marks basic statistics accurate, ``stale`` otherwise."""
    return "fresh" if str(parse_stats_accurate(raw).get("BASIC_STATS", "")).lower() == "true" else "stale"


def int_param(value: str | None) -> int | None:
    """An integer-valued Hive parameter (numFiles …); None when absent or not a number."""
    try:
        return int(value) if value not in (None, "") else None
    except ValueError:
        return None
