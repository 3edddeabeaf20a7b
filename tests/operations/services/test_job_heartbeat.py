"""
A worker beats for its running job on a thread of its own, so a job that reports nothing for a long time (one long
metastore transaction) is still alive while its worker is; the beating stops with the job.

The beats are written on the thread's own connection, so the job must be committed: ``transaction=True``, on the
console's database only.
"""

from __future__ import annotations

import time

import pytest

from operations.models import Job
from operations.services import jobs

pytestmark = [pytest.mark.django_db(transaction=True, databases=["default"]), pytest.mark.usefixtures("restore_roles")]


def test_a_silent_job_keeps_beating_while_it_runs_and_stops_when_it_ends(
    settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given: a job whose work reports nothing for 1.5 s, with beats every 0.2 s (a tenth of a 2 s timeout)
    settings.CATALOG_JOB_HEARTBEAT_TIMEOUT_SECONDS = 2
    beats: list = []

    def silent_work(handle: jobs.JobHandle) -> None:
        for _ in range(3):
            time.sleep(0.5)
            beats.append(handle.job.heartbeat_at)

    monkeypatch.setitem(jobs.JOB_KINDS, "silent", jobs.JobKindRunner(silent_work))
    job = Job.objects.create(kind="silent")

    # when
    finished = jobs.run_job(job.pk)

    # then: each look saw a newer beat than the one before
    assert finished.state == "succeeded"
    assert beats[0] > finished.started_at and beats == sorted(set(beats))

    # and: no beat after the end (two and a half intervals later)
    last = Job.objects.get(pk=job.pk).heartbeat_at
    time.sleep(0.5)
    assert Job.objects.get(pk=job.pk).heartbeat_at == last
