"""LazySimpleSerDe's field separator as the rewrite program reads it (Hive's ``LazyUtils.getByte``)."""

from __future__ import annotations

import pytest

from operations.spark.programs.lazy_text import complex_parser
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


@pytest.mark.parametrize(
    ("hive_type", "text", "expected"),
    [
        ("array<int>", "1\x022\x02x", [1, 2, None]),  # what Hive cannot parse is NULL
        ("array<string>", "", []),
        ("array<string>", "\\N", None),
        ("map<string,int>", "a\x031\x02b\x03\\N", {"a": 1, "b": None}),
        ("struct<a:int,b:string,c:boolean>", "7\x02x", (7, "x", None)),  # a missing trailing field is NULL
        ("array<struct<k:string,v:double>>", "a\x031.5\x02b\x03x", [("a", 1.5), ("b", None)]),
        ("map<string,array<int>>", "k\x031\x042", {"k": [1, 2]}),
        ("struct<d:decimal(5,2),t:timestamp,day:date>", "1.25\x022024-03-01 12:34:56.5\x022024-02-29", None),
    ],
    ids=["array", "empty-array", "null", "map", "struct", "array-of-structs", "map-of-arrays", "decimal-time"],
)
def test_complex_values_are_parsed_as_lazy_simple_serde_reads_them(hive_type: str, text: str, expected: object) -> None:
    """Collections split at their nesting level's separator (^B, ^C, ^D… by default), NULL format at any depth."""
    from datetime import date, datetime
    from decimal import Decimal

    parsed = complex_parser(hive_type, {}, "\x01")(text)
    if hive_type.startswith("struct<d:"):
        expected = (Decimal("1.25"), datetime(2024, 3, 1, 12, 34, 56, 500000), date(2024, 2, 29))  # noqa: DTZ001
    assert parsed == expected


def test_custom_collection_and_map_key_delimiters_are_used() -> None:
    """A table's own collection.delim and mapkey.delim (a number is a byte's value) replace ^B and ^C."""
    serde = {"collection.delim": "|", "mapkey.delim": "58"}  # 58 is ':'
    assert complex_parser("map<string,int>", serde, ",")("a:1|b:2") == {"a": 1, "b": 2}
