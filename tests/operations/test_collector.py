"""
The collector paused while a plan is built (issue 29): off inside, back on after whatever happens inside, and never
turned on by a pause that found it off.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from operations.collector import collector_paused


@pytest.fixture(autouse=True)
def collector_restored() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    (gc.enable if enabled else gc.disable)()


def test_the_collector_is_off_inside_and_on_again_after_an_error() -> None:
    """Inside the pause nothing is collected; an exception leaves the collector on again."""
    # given
    gc.enable()
    seen = []

    # when
    with pytest.raises(RuntimeError), collector_paused():
        seen.append(gc.isenabled())
        raise RuntimeError("the plan failed")

    # then
    assert seen == [False]
    assert gc.isenabled()


def test_a_pause_inside_another_leaves_the_switch_to_the_outer_one() -> None:
    """A nested pause (or one begun while another thread's holds it) does not turn the collector on under it."""
    # given
    gc.enable()
    seen = []

    # when
    with collector_paused():
        with collector_paused():
            pass
        seen.append(gc.isenabled())

    # then
    assert seen == [False]
    assert gc.isenabled()


def test_a_collector_turned_off_by_its_owner_stays_off() -> None:
    """A process that runs without the collector keeps running without it."""
    # given
    gc.disable()

    # when
    with collector_paused():
        pass

    # then
    assert not gc.isenabled()
