"""The merge's estimated duration: the benchmark's rate until merge jobs have run, then their measured throughput."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from operations.choices import JobKind
from operations.merge.estimate import DEFAULT_PARTITIONS_PER_SECOND, estimate_duration
from operations.models import Job

pytestmark = pytest.mark.django_db


def test_without_merge_jobs_the_setting_gives_the_rate(settings) -> None:
    """No merge job yet: the rate is CATALOG_MERGE_PARTITIONS_PER_SECOND (the benchmark's figure by default)."""
    # given
    settings.CATALOG_MERGE_PARTITIONS_PER_SECOND = 2_000
    # when
    estimate = estimate_duration(10_000)
    # then
    assert (estimate.seconds, estimate.partitions_per_second) == (5.0, 2_000)
    assert "CATALOG_MERGE_PARTITIONS_PER_SECOND" in estimate.basis
    assert DEFAULT_PARTITIONS_PER_SECOND > 0


def test_succeeded_merge_jobs_give_their_measured_throughput() -> None:
    """Two merge jobs (30,000 partitions in 10 s, 10,000 in 10 s) give 2,000 partitions/s; a failed one is ignored."""
    # given
    end = timezone.now()
    for done, state in ((30_000, "succeeded"), (10_000, "succeeded"), (99_999, "failed")):
        Job.objects.create(
            kind=JobKind.MERGE,
            state=state,
            partitions_done=done,
            spark_master="local",
            started_at=end - timedelta(seconds=10),
            finished_at=end,
        )
    # when
    estimate = estimate_duration(4_000)
    # then
    assert (estimate.partitions_per_second, estimate.seconds) == (2_000, 2.0)
    assert estimate.basis == "the throughput of the last 2 merge job(s) on the local engine"
