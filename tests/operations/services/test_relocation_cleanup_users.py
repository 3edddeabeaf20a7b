"""
The relocation cleanup finds each unit's users (tables and partitions at, in or above it) by a sorted sweep over one
index, not by comparing every unit with every user: the result is the definition's (``is_inside`` both ways, a
partitioned table's own root above a unit aside), in location order, for many units that are all still referenced,
with sibling names that share a prefix (``dt=1``, ``dt=10``, ``dt=1.bak``, ``dt=1-x``).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from catalog_admin.hive.locations import is_inside
from catalog_admin.selectors.locations import LocationUser
from operations.containment import canonical
from operations.services.relocation_cleanup import Users, _users_sentence, _using

ROOT = "file:/warehouse/sales.db"


def by_definition(path: str, users: Users) -> list[LocationUser]:
    """What the cleanup must find: every user compared with the path."""
    return sorted(
        (u for u in users.found
         if is_inside(u.location, path)
         or (is_inside(path, u.location) and not (u.partition is None and u.table_id in users.partitioned))),
        key=lambda u: (u.location, u.sd_id),
    )  # fmt: skip


def layout(days: int) -> tuple[list[str], Users]:
    """A partitioned table (its root above every unit), an unpartitioned one above some, a partition at every unit
    and beside it siblings whose names extend the unit's; the units' paths and the users."""
    users = [LocationUser(1, f"{ROOT}/orders", 10, "sales", "orders"),
             LocationUser(2, f"{ROOT}/legacy/", 11, "sales", "legacy")]  # fmt: skip
    units = []
    for day in range(days):
        base = f"{ROOT}/orders" if day % 3 else f"{ROOT}/legacy"
        unit = f"{base}/dt={day}"
        units.append(unit)
        users.append(LocationUser(100 + 4 * day, unit, 10, "sales", "orders", f"dt={day}"))
        users.append(LocationUser(101 + 4 * day, f"{unit}.bak", 12, "sales", "bak"))
        users.append(LocationUser(102 + 4 * day, f"{unit}-x/part", 12, "sales", "bak", f"p={day}"))
        users.append(LocationUser(103 + 4 * day, f"{unit}/nested/", 13, "sales", "nested"))
    return units, Users(tuple(users), frozenset({10}))


def test_every_referenced_unit_is_found_with_exactly_its_users() -> None:
    """2,000 units, each still used: the sweep gives each the users the definition gives, and the cleanup's sentence
    names the first of them."""
    # given
    units, users = layout(2000)

    # when
    found = {unit: _using(canonical(unit), users) for unit in units}

    # then
    assert all(found[unit] == by_definition(canonical(unit), users) for unit in units)
    assert all(found[unit] for unit in units)
    assert {u.table for u in found[units[1]]} == {"orders", "nested"}, "the partitioned root above is no user"
    assert {u.table for u in found[units[0]]} == {"legacy", "orders", "nested"}, "an unpartitioned root above is"
    assert _users_sentence(found[units[1]]) == f"sales.orders/dt=1 uses {units[1]} (and 1 more)"


SEGMENTS = st.sampled_from(["a", "a1", "a.b", "a-", "b", "dt=1", "dt=10"])
PATHS = st.lists(SEGMENTS, min_size=1, max_size=4).map(lambda parts: f"{ROOT}/" + "/".join(parts))


@settings(max_examples=200, deadline=None)
@given(
    paths=st.lists(PATHS, min_size=1, max_size=8),
    located=st.lists(st.tuples(PATHS, st.booleans(), st.booleans()), max_size=20),
)
def test_the_sweep_is_the_definition_for_any_layout(paths: list[str], located: list[tuple[str, bool, bool]]) -> None:
    """Random trees of similar names, tables (partitioned or not) and partitions anywhere: the same users."""
    found = tuple(
        LocationUser(sd_id, location + ("/" if slash else ""), sd_id % 3, "db", f"t{sd_id % 3}",
                     None if sd_id % 2 else f"p={sd_id}")
        for sd_id, (location, slash, _) in enumerate(located)
    )  # fmt: skip
    users = Users(found, frozenset(sd_id % 3 for sd_id, (_l, _s, partitioned) in enumerate(located) if partitioned))
    for path in paths:
        assert _using(canonical(path), users) == by_definition(canonical(path), users)
