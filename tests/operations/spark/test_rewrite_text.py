"""LazySimpleSerDe's field separator as the rewrite program reads it (Hive's ``LazyUtils.getByte``)."""

from __future__ import annotations

import pytest

from operations.spark.programs.rewrite import field_delimiter


@pytest.mark.parametrize(
    ("serde", "expected"),
    [
        ({}, "\x01"),
        ({"field.delim": ","}, ","),
        ({"serialization.format": "1"}, "\x01"),  # what Hive writes by default: the byte 1
        ({"field.delim": "9", "serialization.format": "1"}, "\t"),  # a number is a byte's value, field.delim first
        ({"serialization.format": "|"}, "|"),
        ({"field.delim": "||"}, "|"),  # one byte: the first character
    ],
)
def test_the_field_separator_is_read_as_hive_reads_it(serde: dict[str, str], expected: str) -> None:
    """``field.delim``, else ``serialization.format``; a number is the separator byte's value, else its first
    character; ^A by default."""
    assert field_delimiter(serde) == expected
