"""
The lease between a Spark driver and a follower on another host, read and written through a real work location (a
local directory), with the lease's clock moved forward by hand instead of waiting: the follower renews and sees the
driver's beat; the driver's watchdog runs on while the lease is renewed, and stops once it is not (an unreadable
record counts as no renewal), after a hand-over it runs on, and it watches a follower's process on its own host.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from operations.spark import lease as lease_module
from operations.spark.entry import _Following
from operations.spark.lease import MIN_LEASE_SECONDS, DriverBeat, FollowerLease, Freshness
from operations.spark.work import WorkDir

HERE, ELSEWHERE = "driver.example", "elsewhere.example"


class Clock:
    """The lease clock, moved by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(lease_module, "lease_clock", clock)
    return clock


@pytest.fixture
def work(tmp_path: Path) -> WorkDir:
    work = WorkDir(str(tmp_path / "attempt-1"))
    work.prepare()
    return work


def handed_over(work: WorkDir) -> _Following:
    """The watchdog of a driver whose launching worker wrote the hand-over's record (pid 0) and exited."""
    worker = subprocess.Popen([sys.executable, "-c", "pass"])
    following = _Following(worker.pid, HERE)
    work.write_follower(host=HERE, pid=0, token="t")
    worker.wait()
    assert following.goes_on(work) and following.handed_over
    return following


def test_freshness_counts_from_the_last_change_and_an_unread_beat_is_no_change(clock: Clock) -> None:
    # given
    freshness = Freshness()

    # when / then
    assert freshness.age(1) == 0
    clock.now += 7
    assert freshness.age(1) == 7 and freshness.age(None) == 7
    assert freshness.age(2) == 0


def test_the_follower_renews_every_quarter_of_its_lease_with_a_new_beat(clock: Clock, work: WorkDir) -> None:
    # given
    lease = FollowerLease(work, host=ELSEWHERE, pid=42, seconds=20)

    # when
    lease.renew()
    first = work.follower()
    clock.now += 4
    lease.renew()  # not due yet
    unchanged = work.follower()
    clock.now += 1
    lease.renew()

    # then
    assert first is not None and unchanged == first
    assert (first["host"], first["pid"], first["lease"], first["beat"]) == (ELSEWHERE, 42, 20, 1)
    assert work.follower()["beat"] == 2  # type: ignore[index]


def test_a_lease_is_never_shorter_than_the_minimum(work: WorkDir) -> None:
    assert FollowerLease(work, host=ELSEWHERE, pid=1, seconds=1).seconds == MIN_LEASE_SECONDS


def test_the_follower_sees_the_driver_silent_only_once_its_beat_stayed_the_same_for_the_lease(
    clock: Clock, work: WorkDir
) -> None:
    # given: a driver beating
    beat, lease = DriverBeat(work), FollowerLease(work, host=ELSEWHERE, pid=42, seconds=10)
    beat.beat()
    assert not lease.driver_silent()

    # when: it beats every 2 s for 30 s
    for _ in range(15):
        clock.now += 2
        beat.beat()
        silent_while_beating = lease.driver_silent()

    # then
    assert not silent_while_beating and work.alive()["beat"] == 16  # type: ignore[index]

    # when: it stops beating
    clock.now += 10
    at_the_lease = lease.driver_silent()
    clock.now += 0.5

    # then
    assert not at_the_lease and lease.driver_silent()


def test_the_watchdog_runs_on_while_the_lease_is_renewed_and_stops_once_it_is_not(clock: Clock, work: WorkDir) -> None:
    # given: handed over on this host, then followed from another under a lease of 10 s
    following = handed_over(work)
    lease = FollowerLease(work, host=ELSEWHERE, pid=42, seconds=10)
    lease.renew()

    # when: renewed on time for a minute
    verdicts = []
    for _ in range(24):
        clock.now += 2.5
        lease.renew()
        verdicts.append(following.goes_on(work))

    # then
    assert all(verdicts) and not following.handed_over

    # when: the follower stops renewing
    clock.now += 10
    at_the_lease = following.goes_on(work)
    clock.now += 0.5

    # then
    assert at_the_lease and not following.goes_on(work)
    assert following.gone == f"its follower on {ELSEWHERE} (pid 42) did not renew its lease of 10 s"


def test_an_unreadable_follower_record_counts_as_no_renewal(clock: Clock, work: WorkDir) -> None:
    # given: followed under a lease
    following = handed_over(work)
    FollowerLease(work, host=ELSEWHERE, pid=42, seconds=10).renew()
    assert following.goes_on(work)

    # when: the record cannot be read (a store that does not answer)
    (work.path / "follower").write_text("{not json")
    clock.now += 5
    halfway = following.goes_on(work)
    clock.now += 5.5

    # then
    assert halfway and not following.goes_on(work)


def test_a_follower_that_hands_over_again_leaves_the_driver_running_for_a_successor(
    clock: Clock, work: WorkDir
) -> None:
    # given: followed under a lease
    following = handed_over(work)
    FollowerLease(work, host=ELSEWHERE, pid=42, seconds=10).renew()
    assert following.goes_on(work)

    # when: the follower stops and hands the driver over (pid 0), and nobody renews for a long time
    work.write_follower(host=ELSEWHERE, pid=0, token="t2")
    clock.now += 600

    # then
    assert following.goes_on(work) and following.handed_over and following.lease is None


def test_a_successor_on_the_drivers_own_host_is_watched_by_its_process(clock: Clock, work: WorkDir) -> None:
    # given: followed from elsewhere, then adopted by a process on this host
    following = handed_over(work)
    FollowerLease(work, host=ELSEWHERE, pid=42, seconds=10).renew()
    assert following.goes_on(work)
    successor = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        work.write_follower(host=HERE, pid=successor.pid)

        # when / then: no lease counts any more, its process does
        clock.now += 600
        assert following.goes_on(work) and following.watched == successor.pid and following.lease is None
    finally:
        successor.kill()
        successor.wait()

    # when: it dies
    assert not following.goes_on(work)

    # then
    assert following.gone == f"its worker (pid {successor.pid}) died without handing it over"


def test_a_record_naming_another_hosts_process_without_a_lease_is_a_hand_over(clock: Clock, work: WorkDir) -> None:
    """A follower of an earlier release elsewhere names itself without a lease: the driver runs on as handed over."""
    following = handed_over(work)
    work.write_follower(host=ELSEWHERE, pid=42)
    clock.now += 600
    assert following.goes_on(work) and following.handed_over
