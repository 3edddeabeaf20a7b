"""
A lease between a Spark driver and a worker that follows it from another host, through the work location only.

Neither side can see the other's processes, so each beats into the work location and watches the other's beat:

- The driver's watchdog writes ``alive`` every :data:`BEAT_SECONDS` (:class:`DriverBeat`). A follower that sees it
  unchanged for a lease's length stops following (the driver, or its host, is gone or cut off).
- The follower renews its ``follower`` record (:class:`FollowerLease`) every quarter of the lease. The driver's
  watchdog ends the driver's process group once that record has stayed the same for the lease's length
  (:class:`Freshness`), so a driver whose follower died (kill -9, a lost host) never runs on unsupervised. A record
  the store does not return counts as unchanged: a driver cut off from its work location stops as well.

Ages are read on the reader's own clock (``CLOCK_BOOTTIME``, which goes on while a machine sleeps), never compared
with the writer's: hosts' clocks need not agree.
"""

from __future__ import annotations

import time
from collections.abc import Hashable
from typing import Any

from operations.spark.work import WorkDir

__all__ = ("BEAT_SECONDS", "MIN_LEASE_SECONDS", "DriverBeat", "FollowerLease", "Freshness", "lease_clock")

BEAT_SECONDS = 2.0
MIN_LEASE_SECONDS = 10.0  # several of the driver's beats and of the follower's renewals fit in it


def lease_clock() -> float:
    """Seconds on this host's clock that counts time asleep too (``CLOCK_BOOTTIME``; monotonic time without it)."""
    boottime = getattr(time, "CLOCK_BOOTTIME", None)
    return time.clock_gettime(boottime) if boottime is not None else time.monotonic()


class Freshness:
    """How long a beat has stayed the same, by this host's clock: each new value starts the count again."""

    def __init__(self) -> None:
        self.key: Hashable = None
        self.since = lease_clock()

    def age(self, key: Hashable) -> float:
        """Seconds since the beat last changed; ``key`` None: nothing could be read this time (no change)."""
        if key is not None and key != self.key:
            self.key, self.since = key, lease_clock()
        return lease_clock() - self.since


class DriverBeat:
    """The driver's side: ``alive`` written into the work location every :data:`BEAT_SECONDS`."""

    def __init__(self, work: WorkDir) -> None:
        self.work = work
        self.count = 0
        self.due = 0.0

    def beat(self) -> None:
        """Write the next beat when it is due; a store that does not answer is asked again next time."""
        if lease_clock() < self.due:
            return
        try:
            self.work.write_alive(self.count + 1)
        except OSError:
            return
        self.count += 1
        self.due = lease_clock() + BEAT_SECONDS


class FollowerLease:
    """The follower's side: its ``follower`` record renewed every quarter of ``seconds``, and the driver's beat
    watched (:meth:`driver_silent`)."""

    def __init__(self, work: WorkDir, *, host: str, pid: int, seconds: float) -> None:
        self.work, self.host, self.pid, self.seconds = work, host, pid, max(seconds, MIN_LEASE_SECONDS)
        self.renewals = 0
        self.due = 0.0
        self.driver = Freshness()

    def renew(self) -> None:
        """Renew the lease when due; a store that does not answer is asked again at the next call (the driver counts
        the missed renewal against the lease)."""
        if lease_clock() < self.due:
            return
        try:
            self.work.write_follower(host=self.host, pid=self.pid, lease=self.seconds, beat=self.renewals + 1)
        except OSError:
            return
        self.renewals += 1
        self.due = lease_clock() + self.seconds / 4

    def driver_silent(self) -> bool:
        """Whether the driver's ``alive`` beat has stayed the same (or unreadable) for the lease's length."""
        return self.driver.age(_beat_key(self.work)) > self.seconds


def _beat_key(work: WorkDir) -> Hashable:
    try:
        record: dict[str, Any] | None = work.alive()
    except (OSError, ValueError):
        return None
    return None if record is None else (record.get("beat"), record.get("at"))
