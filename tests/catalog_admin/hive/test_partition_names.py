"""Hive's partition names: Warehouse.makePartName with FileUtils.escapePathName, read back by unescapePathName."""

from __future__ import annotations

import pytest

from catalog_admin.hive.partition_names import (
    HIVE_DEFAULT_PARTITION,
    escape_path_name,
    partition_name,
    partition_values,
    unescape_path_name,
)


@pytest.mark.parametrize(
    ("spec", "name"),
    [
        pytest.param([("dt", "a'b*[c]")], "dt=a%27b%2A%5Bc%5D", id="quote-star-brackets"),
        pytest.param([("dt", "café au lait")], "dt=café au lait", id="non-ascii-and-space-kept"),
        pytest.param(
            [("k", "\x00\x01\t\n\x1f\"#%'*/:=?\\\x7f{[]^")],
            "k=%00%01%09%0A%1F%22%23%25%27%2A%2F%3A%3D%3F%5C%7F%7B%5B%5D%5E",
            id="every-escaped-character",
        ),
        pytest.param([("k", "!$&()+,-.;<>@_`|}~ ")], "k=!$&()+,-.;<>@_`|}~ ", id="punctuation-kept"),
        pytest.param([("DT", "2024-01-01"), ("hour", "")], "dt=2024-01-01/hour=__HIVE_DEFAULT_PARTITION__", id="empty"),
    ],
)
def test_partition_names_are_escaped_as_hive_escapes_them(spec: list[tuple[str, str]], name: str) -> None:
    """Keys lower-cased, escapePathName's set as %XX, an empty value __HIVE_DEFAULT_PARTITION__; values read back."""
    # when
    made = partition_name(spec)

    # then
    assert made == name
    assert partition_values(made) == tuple(value or HIVE_DEFAULT_PARTITION for _key, value in spec)


@pytest.mark.parametrize(
    ("escaped", "value"),
    [
        pytest.param("100%", "100%", id="percent-at-the-end"),
        pytest.param("%zz%4%41", "%zz%4A", id="not-hex-then-hex"),
        pytest.param("caf%C3%A9", "cafÃ©", id="one-character-per-escape-not-utf8"),
        pytest.param("%e9t%E9", "été", id="either-case"),
    ],
)
def test_unescaping_follows_hive(escaped: str, value: str) -> None:
    """FileUtils.unescapePathName: each %XX is the character XX (not a UTF-8 byte); a % without two hex digits stays."""
    assert unescape_path_name(escaped) == value


def test_an_escaped_value_is_one_directory_name() -> None:
    """Whatever the value, its escaped form has no '/', '?', '#' or '%' other than escape sequences' own."""
    # given
    hostile = "../../etc/passwd?x#y%2F"

    # when
    escaped = escape_path_name(hostile)

    # then
    assert escaped == "..%2F..%2Fetc%2Fpasswd%3Fx%23y%252F"
    assert unescape_path_name(escaped) == hostile
