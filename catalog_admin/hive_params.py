"""Reading Hive's well-known table and partition parameters."""

from __future__ import annotations

import json
from typing import Any

__all__ = ("BASIC_STAT_KEYS", "int_param", "parse_stats_accurate", "stats_freshness")

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


def stats_freshness(raw: str | None) -> str:
    """``fresh`` when Hive marks basic statistics accurate, ``stale`` otherwise."""
    return "fresh" if str(parse_stats_accurate(raw).get("BASIC_STATS", "")).lower() == "true" else "stale"


def int_param(value: str | None) -> int | None:
    """An integer-valued Hive parameter (numFiles …); None when absent or not a number."""
    try:
        return int(value) if value not in (None, "") else None
    except ValueError:
        return None
