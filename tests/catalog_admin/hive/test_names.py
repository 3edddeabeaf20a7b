"""Hive's validateName per version, exactly, and the console's safe-directory-name rule on top of it."""

from __future__ import annotations

import pytest

from catalog_admin.hive.names import directory_name_problems, is_valid_name
from catalog_admin.hive.versions import SchemaVersion
from operations.rules import check_database_name, check_table_name

VERSIONS = {"2.3": SchemaVersion(2, 3, 0), "3.1": SchemaVersion(3, 1, 0), "4.0": SchemaVersion(4, 0, 0)}

# (name, validateName on 2.3, on 3.1, on 4.0)
VALIDATE_NAME = [
    ("orders", True, True, True),
    ("Orders_2024", True, True, True),
    ("a/b", True, True, True),
    ("../../../../../../tmp/outside/x", False, False, True),
    ("x?y", False, False, True),
    ("x#y", False, False, True),
    ("%2F", False, False, True),
    ("..", False, False, True),
    ("my table", False, False, True),
    ("quote'and\"double", False, False, True),
    ("a[b]{c}|d^e$f!g~h@i`j", False, False, True),
    ("back\\slash", False, False, False),
    ("nul\x00byte", False, False, False),
    ("données", False, False, False),  # Java's \w is ASCII only
    ("trailing\n", False, False, False),  # Matcher.matches: the whole name
    ("", False, False, False),
]


@pytest.mark.parametrize(("name", "on_23", "on_31", "on_40"), VALIDATE_NAME)
def test_validate_name_matches_each_hive_version(name: str, on_23: bool, on_31: bool, on_40: bool) -> None:
    """MetaStoreUtils.validateName with special characters on (Hive's default): '/' only up to 3.1, the list on 4.x."""
    # given
    expected = {"2.3": on_23, "3.1": on_31, "4.0": on_40}

    # when
    accepted = {line: is_valid_name(name, version) for line, version in VERSIONS.items()}

    # then
    assert accepted == expected


def test_validate_name_without_special_characters_accepts_word_characters_only() -> None:
    """metastore.support.special.characters.tablename=false: only [a-zA-Z_0-9]+, on every version."""
    # given
    names = ["orders_2", "a/b", "my table"]

    # when
    accepted = [is_valid_name(n, VERSIONS["4.0"], special_characters=False) for n in names]

    # then
    assert accepted == [True, False, False]


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("../../../../../../tmp/outside/x", "'..' climbs out of the parent directory"),
        ("x?y", "a location URI ends its path at '?'"),
        ("x#y", "a location URI ends its path at '#'"),
        ("%2F", "'%' starts an escape sequence in a location URI"),
        ("a/b", "'/' separates directories, so the data would go into a nested directory"),
        ("a//b", "it has an empty path segment"),
        ("..", "'..' climbs out of the parent directory"),
        (".", "'.' names the parent directory itself"),
        ("nul\x00byte", "it contains a control character"),
        ("", "it is empty"),
    ],
)
def test_unsafe_directory_names_are_named(name: str, problem: str) -> None:
    """Each way a name could leave its parent directory is reported with what is wrong."""
    # when
    problems = directory_name_problems(name)

    # then
    assert problem in problems


@pytest.mark.parametrize("name", ["orders", "my table", "t$1:x(2)", "a.b", "...", "données"])
def test_ordinary_names_are_safe_directory_names(name: str) -> None:
    """Dots inside a name, spaces and other characters that stay in one path segment are fine."""
    assert directory_name_problems(name) == ()


@pytest.mark.parametrize("line", list(VERSIONS))
def test_the_issues_hostile_names_are_blocked_on_every_version(line: str) -> None:
    """Issue 9 cases 3 and 5: '../…', 'x?y' and 'a/b' are blocked whatever Hive's own rule says, naming the problem."""
    # given
    hostile = ["../../../../../../tmp/outside/x", "x?y", "a/b"]

    # when
    findings = {name: check_table_name(name, VERSIONS[line]) for name in hostile}

    # then
    for name, found in findings.items():
        unsafe = [f for f in found if f.code == "unsafe_name"]
        assert len(unsafe) == 1 and unsafe[0].severity == "blocker"
        assert unsafe[0].message.startswith(f"The table name {name!r} cannot be used as a directory name: ")


def test_database_names_must_be_safe_directory_names() -> None:
    """A destination database whose name becomes '<warehouse>/<name>.db' must not leave the warehouse."""
    # when
    findings = [check_database_name(n) for n in ("sales", "../etc")]

    # then
    assert findings[0] == []
    assert [f.code for f in findings[1]] == ["unsafe_name"]
