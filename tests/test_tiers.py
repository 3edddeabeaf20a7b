"""The xdist groups ``tests/fixtures/tiers.py`` gives Spark and server tests (``xdist_group_of``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from tests.fixtures.tiers import SERVER_GROUPS, SPARK_GROUPS, xdist_group_of


@dataclass
class Item:
    """What ``xdist_group_of`` reads of a collected test: its node id, fixture closure and markers."""

    nodeid: str
    fixturenames: tuple[str, ...] = ()
    markers: dict[str, pytest.MarkDecorator] = field(default_factory=dict)

    def get_closest_marker(self, name: str) -> pytest.Mark | None:
        return self.markers[name].mark if name in self.markers else None


SPARK = {"spark": pytest.mark.spark}


@pytest.mark.parametrize(("fixture", "group"), SERVER_GROUPS)
def test_a_test_that_needs_a_server_is_in_that_servers_group_whatever_its_module(fixture: str, group: str) -> None:
    """Every test that needs the Connect server, the standalone cluster or SeaweedFS runs where it was started."""
    # given
    items = [Item(f"tests/{name}.py::test_x", ("db", fixture), SPARK) for name in ("a", "b", "c", "witness/d")]

    # when
    groups = {xdist_group_of(item) for item in items}

    # then
    assert groups == {group}


def test_the_servers_are_spread_over_both_spark_groups() -> None:
    """The job servers do not all land on one worker."""
    assert {group for _, group in SERVER_GROUPS} == set(SPARK_GROUPS)


def test_a_spark_modules_tests_share_one_group_by_the_modules_path() -> None:
    """The other Spark tests (marker or fixture) are grouped by module, stably: the same module, the same group."""
    # given
    marked = [Item(f"tests/witness/test_one.py::test_{n}", (), SPARK) for n in range(5)]
    by_fixture = Item("tests/witness/test_one.py::test_fixture", ("spark_catalog", "spark"))
    modules = [Item(f"tests/witness/test_{n}.py::test_x", (), SPARK) for n in range(40)]

    # when
    groups = {xdist_group_of(item) for item in [*marked, by_fixture]}
    spread = {xdist_group_of(item) for item in modules}

    # then
    assert len(groups) == 1
    assert groups <= set(SPARK_GROUPS)
    assert spread == set(SPARK_GROUPS)
    assert xdist_group_of(Item("tests/witness/test_spark_rewrite.py::test_x", (), SPARK)) == "spark-b"


def test_a_declared_group_wins_and_other_tests_have_none() -> None:
    """``pytest.mark.xdist_group`` overrides the rule; a test without Spark or a server may run on any worker."""
    # given
    declared = Item("tests/a.py::test_x", ("spark_connect",), {"xdist_group": pytest.mark.xdist_group("spark-a")})
    plain = Item("tests/a.py::test_y", ("db", "metastore"))

    # then
    assert xdist_group_of(declared) == "spark-a"
    assert xdist_group_of(plain) is None
