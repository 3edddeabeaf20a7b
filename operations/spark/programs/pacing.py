"""
Batches paced so that units report done every few seconds (issue 29: a 56-partition compaction in one batch of up to
1,000 units showed ``0 of 56`` for minutes, then 100 %).

:func:`paced_batches` hands out a program's pending units in batches: the first a twentieth of them (at least one),
so the first units finish early and the job page has an ETA; each next one as many as the batches so far did in
:data:`TARGET_BATCH_SECONDS` at their own pace (growing at most fourfold at a time, never past the program's cap).
Each batch still costs a Spark job or two of its own, so a batch is never smaller than it needs to be.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

__all__ = ("FIRST_BATCH_FRACTION", "TARGET_BATCH_SECONDS", "next_batch_size", "paced_batches")

T = TypeVar("T")
TARGET_BATCH_SECONDS = 5.0  # how often, at most, the units of a batch report done
FIRST_BATCH_FRACTION = 20  # the first batch: this fraction of the units
GROWTH = 4  # a batch is at most this many times the last one


def next_batch_size(done: int, seconds: float, last: int, cap: int, target: float = TARGET_BATCH_SECONDS) -> int:
    """The next batch's units: what ``done`` units in ``seconds`` (the batches so far) make in ``target`` seconds,
    between one and ``GROWTH`` × ``last``, at most ``cap``."""
    grown = min(cap, GROWTH * max(last, 1))
    if seconds <= 0 or done <= 0:
        return max(1, grown)
    return max(1, min(grown, math.floor(target * done / seconds)))


def paced_batches(
    items: Sequence[T], cap: int, *, target: float = TARGET_BATCH_SECONDS, clock: Callable[[], float] = time.monotonic
) -> Iterator[list[T]]:
    """``items`` in consecutive batches of at most ``cap``, each timed while the caller works on it (between one
    ``next`` and the following) to size the next."""
    cap = max(1, cap)
    size = min(cap, max(1, math.ceil(len(items) / FIRST_BATCH_FRACTION)))
    start, done, seconds = 0, 0, 0.0
    while start < len(items):
        batch = list(items[start : start + size])
        began = clock()
        yield batch
        seconds += clock() - began
        start, done = start + len(batch), done + len(batch)
        size = next_batch_size(done, seconds, len(batch), cap, target)
