"""LazySimpleSerDe's text rows: delimiters by byte value or character, escapes, the null format."""

from __future__ import annotations

import pytest

from catalog_admin.hive.text_format import TextFormat, split_fields


@pytest.mark.parametrize(
    ("params", "delimiter"),
    [
        ({}, "\x01"),
        ({"serialization.format": "1"}, "\x01"),  # a number is a byte value (LazyUtils.getByte)
        ({"field.delim": "9"}, "\t"),
        ({"field.delim": ",", "serialization.format": "|"}, ","),  # field.delim wins
        ({"serialization.format": "|"}, "|"),
    ],
)
def test_the_field_delimiter_comes_from_field_delim_then_serialization_format(params, delimiter) -> None:
    assert TextFormat.from_serde_params(params).field_delimiter == delimiter


def test_fields_are_split_escaped_and_padded_and_the_null_format_is_none() -> None:
    text = TextFormat.from_serde_params({"field.delim": ",", "escape.delim": "\\"})

    assert split_fields("a\\,b,\\N,c,extra", text, 3) == ["a,b", None, "c"]
    assert split_fields("only", text, 3) == ["only", None, None]


def test_an_empty_null_format_makes_empty_fields_null() -> None:
    text = TextFormat.from_serde_params({"field.delim": "|", "serialization.null.format": ""})

    assert split_fields("|x|", text, 3) == [None, "x", None]
