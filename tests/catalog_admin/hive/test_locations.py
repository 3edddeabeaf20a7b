"""
Governed roots (issue 29): ``GovernedRoots.governs`` asks each root's prefix once per plan instead of comparing every
location with every root canonically; its answer is ``is_inside(location, root, strictly=True)`` for some root, over
every spelling of local, object-store and HDFS locations, ``.``/``..`` segments and trailing slashes included.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from catalog_admin.hive.locations import GovernedRoots, is_inside

PREFIXES = ["file:/", "/", "file:///", "s3a://bucket/", "s3a://bucket", "hdfs://nn:8020/"]
SEGMENTS = ["a", "b", "..", ".", "", "x y", "c.d", ".catalog-admin-trash"]
LOCATIONS = st.builds(
    lambda prefix, segments, slash: prefix + "/".join(segments) + slash,
    st.sampled_from(PREFIXES),
    st.lists(st.sampled_from(SEGMENTS), max_size=4),
    st.sampled_from(["", "/"]),
)


@given(roots=st.lists(LOCATIONS, max_size=3), locations=st.lists(LOCATIONS, min_size=1, max_size=5))
def test_governs_is_strictly_inside_one_of_the_roots(roots: list[str], locations: list[str]) -> None:
    """The prefixes made once answer as the canonical comparison with each root, a root itself never governed."""
    # given
    governed = GovernedRoots(tuple(roots))

    # when
    answers = [governed.governs(location) for location in locations]

    # then
    assert answers == [any(is_inside(location, root, strictly=True) for root in roots) for location in locations]
