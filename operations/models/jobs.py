"""Background jobs: queued work run by worker processes, with progress and a log the browser polls."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from functools import cached_property

from django.db import models
from django.utils import timezone

from operations.choices import FINISHED_JOB_STATES, JobState

__all__ = ("LOG_LINES_SHOWN", "Job", "JobLog", "JobLogEntry")

LOG_LINES_SHOWN = 200  # the last lines a page or the API shows of a job's log


@dataclass(frozen=True)
class JobLog:
    """The last lines of a job's log (oldest first) and how many it has."""

    lines: list[JobLogEntry]
    count: int


class Job(models.Model):
    """One unit of background work of a kind (``operations.choices.JobKind``), with progress and a log (its
    ``JobLogEntry`` rows). Only the runner base (``operations.services.jobs``) writes job rows.

    A Spark job also counts partitions, files and bytes (done of total, as its program reports them), keeps the
    units it verified (``completed``: a resumed run skips them), its driver's log tail and the Spark application.
    A queued job with an ``adoption`` was handed over: its driver runs on, and the worker that claims it follows that
    driver instead of starting one.
    """

    kind = models.CharField(max_length=32)
    change_request = models.ForeignKey(
        "operations.ChangeRequest", null=True, blank=True, on_delete=models.CASCADE, related_name="jobs"
    )
    state = models.CharField(max_length=16, choices=JobState.choices, default=JobState.QUEUED)
    progress = models.PositiveSmallIntegerField(default=0)
    message = models.CharField(max_length=500, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="When the worker last reported progress; a silent job counts as dead."
    )
    attempts = models.PositiveIntegerField(default=0, help_text="How many times a worker claimed the job.")
    worker = models.CharField(max_length=200, blank=True, help_text="host:pid of the worker running it.")
    program = models.CharField(max_length=64, blank=True, help_text="The Spark program (operations.spark.programs).")
    plan = models.JSONField(default=dict, blank=True, help_text="The Spark program's JSON input.")
    result = models.JSONField(null=True, blank=True, help_text="The Spark program's JSON result manifest.")
    completed = models.JSONField(default=list, blank=True, help_text="Units (partitions) verified so far.")
    partitions_done = models.BigIntegerField(null=True, blank=True)
    partitions_total = models.BigIntegerField(null=True, blank=True)
    files_done = models.BigIntegerField(null=True, blank=True)
    files_total = models.BigIntegerField(null=True, blank=True)
    bytes_done = models.BigIntegerField(null=True, blank=True)
    bytes_total = models.BigIntegerField(null=True, blank=True)
    log_tail = models.TextField(blank=True, help_text="The last lines of the Spark driver's log.")
    spark_master = models.CharField(max_length=300, blank=True)
    spark_app_id = models.CharField(max_length=200, blank=True)
    spark_ui_url = models.CharField(max_length=500, blank=True)
    driver_pid = models.IntegerField(null=True, blank=True)
    cancel_requested_at = models.DateTimeField(null=True, blank=True)
    cancel_requested_by = models.CharField(max_length=150, blank=True)
    committing_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the job passed its point of no return (a metastore transaction, a merge's publish): from then "
        "on a cancel is too late.",
    )
    work_started_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When this attempt's Spark program first reported (its session up): the start-up before it, the "
        "work after it.",
    )
    work_bytes_at_start = models.BigIntegerField(
        null=True, blank=True, help_text="Bytes already done when this attempt's work started (a resumed run's)."
    )
    adoption = models.JSONField(
        null=True,
        blank=True,
        help_text="What a successor needs to follow the Spark driver a stopping worker left running (host, pid, "
        "program, launch directory, work location, progress read so far): set from the handover until the driver "
        "ends.",
    )

    class Meta:
        ordering = ("-created_at",)
        indexes = [models.Index(fields=["state", "created_at"])]

    def __str__(self) -> str:
        return f"job #{self.pk} {self.kind} {self.state}"

    @property
    def is_done(self) -> bool:
        return self.state in FINISHED_JOB_STATES

    @property
    def continues_earlier_work(self) -> bool:
        """Whether an earlier run may have written this job's staging: a resumed attempt, or a driver handed over by
        a stopping worker (the same attempt, adopted)."""
        return self.attempts > 1 or self.adoption is not None

    @cached_property
    def recent_log(self) -> JobLog:
        """The last ``LOG_LINES_SHOWN`` log lines (by keyset on the entries' ids) and the count."""
        if self.pk is None:
            return JobLog([], 0)
        entries = self.log_entries.order_by("-id")
        return JobLog(list(reversed(entries[:LOG_LINES_SHOWN])), entries.count())

    @property
    def work_seconds(self) -> float | None:
        """Seconds of work so far: since the program first reported (after Spark's start-up) until the point of no
        return, the end or now; since the job started when the program never said when its work began."""
        began = self.work_started_at or self.started_at
        if began is None:
            return None
        until = self.committing_at or self.finished_at or timezone.now()
        return max((until - began).total_seconds(), 0.0)

    @property
    def bytes_per_second(self) -> float | None:
        """Throughput of this attempt's work: the bytes it copied or rewrote over its work's seconds (Spark's
        start-up and the swap left out; None before the first unit is done)."""
        done = (self.bytes_done or 0) - (self.work_bytes_at_start or 0)
        seconds = self.work_seconds
        if done <= 0 or not seconds:
            return None
        return done / seconds

    @property
    def eta(self) -> timedelta | None:
        """Time left of the work (copy or rewrite) at this attempt's throughput so far, from the units done: None
        before the first units or once the work is over (the swap's own estimate is the approved plan's)."""
        rate = self.bytes_per_second
        if self.is_done or self.committing_at is not None or not rate or self.bytes_total is None:
            return None
        return timedelta(seconds=max(self.bytes_total - (self.bytes_done or 0), 0) / rate)

    @property
    def measured_phases(self) -> list[tuple[str, float]]:
        """The phases this attempt went through so far, measured: Spark's start-up, the work, the swap (seconds;
        the current one up to now)."""
        if self.started_at is None or self.work_started_at is None:
            return []
        now = self.finished_at or timezone.now()
        work_end = self.committing_at or now
        phases = [("start-up", self.work_started_at - self.started_at), ("work", work_end - self.work_started_at)]
        if self.committing_at is not None:
            phases.append(("swap", now - self.committing_at))
        return [(name, round(max(took.total_seconds(), 0.0), 1)) for name, took in phases]

    @property
    def run_seconds(self) -> float | None:
        """This attempt's seconds from its start to its end (or now)."""
        if self.started_at is None:
            return None
        return round(((self.finished_at or timezone.now()) - self.started_at).total_seconds(), 1)

    @property
    def estimated_swap_seconds(self) -> float | None:
        """The swap's seconds in the approved plan's estimate (None: none, or no basis)."""
        phases = (self.estimate or {}).get("phases") or []
        return next((p.get("seconds") for p in phases if p.get("name") == "swap"), None)

    @property
    def estimate(self) -> dict | None:
        """The duration the approved plan estimated (``DurationEstimate.as_dict``: seconds, phases with their
        basis), for a data job; None otherwise."""
        approved = self.plan.get("approved") if isinstance(self.plan, dict) else None
        copy = approved.get("data_copy") if isinstance(approved, dict) else None
        duration = copy.get("duration") if isinstance(copy, dict) else None
        return duration if isinstance(duration, dict) else None


class JobLogEntry(models.Model):
    """One line of a job's log: appending is an INSERT, so concurrent writers never lose a line; readers take the last
    lines by keyset (``operations.selectors.job_log_lines``)."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="log_entries")
    at = models.DateTimeField(default=timezone.now)
    message = models.TextField()

    class Meta:
        ordering = ("pk",)
        indexes = [models.Index(fields=["job", "id"])]

    def __str__(self) -> str:
        return f"job #{self.job_id} {self.at:%H:%M:%S} {self.message[:60]}"
