"""
Who uses a directory (issue 29): many locations are read through a few covering ranges, and the answer is the same as
asking with one range per location, on the seeded metastores (PostgreSQL and SQLite).
"""

from __future__ import annotations

import pytest

from catalog_admin.hive.locations import canonical
from catalog_admin.models import StorageDescriptor
from catalog_admin.selectors import locations
from catalog_admin.selectors.locations import covering, location_users
from catalog_admin.selectors.metastores import Metastore
from operations.containment import ancestors

pytestmark = pytest.mark.django_db(databases="__all__")


def test_covering_lifts_the_deepest_directories_to_their_parents_and_never_to_a_root() -> None:
    """Many partition directories become their table's directory; a root is never a cover; few stay as they are."""
    # given
    hours = [f"file:/wh/db.db/t/dt=2024-01-0{day}/hour={hour}" for day in range(1, 4) for hour in range(3)]
    roots = ["file:/a", "file:/b", "s3a://bucket/c"]

    # when
    lifted = covering([*hours, "file:/wh/db.db/t/dt=2024-01-01"], 2)
    few = covering(hours[:2], 32)
    unliftable = covering(roots, 1)

    # then
    assert lifted == ["file:/wh/db.db/t"]
    assert few == hours[:2]
    assert unliftable == sorted(roots)


@pytest.mark.parametrize("metastore_alias", ["hive31_pg", "hive_sqlite"], indirect=True)
def test_many_locations_read_through_a_cover_find_what_one_range_each_finds(
    metastore: Metastore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every seeded location (half of them asked for, their ancestors too): the users found with a cover of one
    directory are those found with one range per location, and none outside what was asked for."""
    # given
    stored = sorted(
        {
            canonical(loc)
            for loc in StorageDescriptor.objects.using(metastore.alias).values_list("location", flat=True)
            if loc
        }
    )
    asked = stored[::2]
    above = sorted({a for location in asked for a in ancestors(location)})

    # when
    monkeypatch.setattr(locations, "COVER", 10_000)
    one_each = location_users(metastore, asked, ancestors=above)
    monkeypatch.setattr(locations, "COVER", 1)
    covered = location_users(metastore, asked, ancestors=above)

    # then
    assert len(asked) > 10 and one_each
    assert covered == one_each
    assert len(covered) < StorageDescriptor.objects.using(metastore.alias).count()
