"""Hive's COLUMN_STATS_ACCURATE flags, read and written as Hive does."""

from __future__ import annotations

import pytest

from catalog_admin.hive.statistics import accurate_flags, parse_stats_accurate, stats_freshness


def test_flags_are_written_compact_and_read_back() -> None:
    """Hive writes the flags as compact JSON; they parse back to the same columns."""
    # when
    raw = accurate_flags(["id", "name"])

    # then
    assert raw == '{"BASIC_STATS":"true","COLUMN_STATS":{"id":"true","name":"true"}}'
    assert parse_stats_accurate(raw)["COLUMN_STATS"] == {"id": "true", "name": "true"}
    assert accurate_flags() == '{"BASIC_STATS":"true"}'


@pytest.mark.parametrize(
    ("raw", "freshness"),
    [('{"BASIC_STATS":"true"}', "fresh"), ('{"BASIC_STATS":"TRUE"}', "fresh"), ("{}", "stale"), ("not json", "stale"),
     ("[1]", "stale"), (None, "stale")],
)  # fmt: skip
def test_freshness_reads_basic_stats_and_tolerates_garbage(raw: str | None, freshness: str) -> None:
    """Only BASIC_STATS=true (any case) is fresh; absent, malformed or non-object flags are stale, never an error."""
    assert stats_freshness(raw) == freshness
