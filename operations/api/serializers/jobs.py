"""Background jobs as the API returns them: state, progress, log, the Spark application."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from operations.api.serializers.base import link
from operations.choices import JobState
from operations.models import Job

__all__ = ("JobLogLineSerializer", "JobSerializer")


class JobLogLineSerializer(serializers.Serializer):
    at = serializers.DateTimeField()
    message = serializers.CharField()


class JobSerializer(serializers.Serializer):
    """A background job: its state, progress (0–100), current message and log."""

    id = serializers.IntegerField()
    url = serializers.SerializerMethodField()
    kind = serializers.CharField()
    state = serializers.ChoiceField(choices=JobState.choices)
    done = serializers.BooleanField(
        source="is_done", help_text="succeeded, failed, errored or cancelled: stop polling."
    )
    progress = serializers.IntegerField(help_text="0 to 100.")
    message = serializers.CharField()
    log = JobLogLineSerializer(
        many=True, source="recent_log.lines", help_text="The log's last lines (at most 200), oldest first."
    )
    log_count = serializers.IntegerField(source="recent_log.count", help_text="How many lines the whole log has.")
    error = serializers.CharField(
        help_text="Why it failed (the work's reason) or errored (an unexpected exception's last line)."
    )
    change_request = serializers.IntegerField(source="change_request_id", allow_null=True)
    change_request_url = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    heartbeat_at = serializers.DateTimeField(
        allow_null=True, help_text="The worker's last progress report; a job silent for longer is dead."
    )
    attempts = serializers.IntegerField(help_text="How many times a worker claimed the job (resumes count).")
    worker = serializers.CharField(help_text="host:pid of the worker that ran it last.")
    program = serializers.CharField(help_text="The Spark program, for a Spark job; empty otherwise.")
    partitions_done = serializers.IntegerField(allow_null=True)
    partitions_total = serializers.IntegerField(allow_null=True)
    files_done = serializers.IntegerField(allow_null=True)
    files_total = serializers.IntegerField(allow_null=True)
    bytes_done = serializers.IntegerField(allow_null=True)
    bytes_total = serializers.IntegerField(allow_null=True)
    bytes_per_second = serializers.FloatField(
        allow_null=True, help_text="This run's throughput over its work so far (start-up and swap left out)."
    )
    eta_seconds = serializers.SerializerMethodField(
        help_text="Time left of the work (copy or rewrite) at this run's throughput, from the units done so far; null "
        "before the first units and after the work."
    )
    work_started_at = serializers.DateTimeField(
        allow_null=True, help_text="When this attempt's Spark program first reported: Spark's start-up ended."
    )
    phases = serializers.SerializerMethodField(
        help_text="The phases this attempt went through so far, measured: start-up, work, swap (seconds)."
    )
    estimate = serializers.SerializerMethodField(
        help_text="The approved plan's estimate of a data job: seconds, and its phases (start-up, work, swap) each "
        "with its basis; null for other jobs."
    )
    completed = serializers.ListField(child=serializers.CharField(), help_text="Units (partitions) verified so far.")
    log_tail = serializers.CharField(help_text="The last lines of the Spark driver's log.")
    spark_master = serializers.CharField()
    spark_app_id = serializers.CharField()
    spark_ui_url = serializers.CharField(help_text="The Spark application's web UI, while it runs.")
    cancel_requested_at = serializers.DateTimeField(allow_null=True)
    committing_at = serializers.DateTimeField(
        allow_null=True, help_text="When it passed its point of no return: from then on a cancel is too late."
    )
    result = serializers.SerializerMethodField(help_text="The Spark program's result manifest, once the job is done.")

    def get_url(self, job: Job) -> str:
        return link("job-detail", self.context, pk=job.pk)

    @extend_schema_field({"type": "object", "nullable": True, "additionalProperties": True})
    def get_result(self, job: Job) -> Any:
        return job.result if job.is_done else None  # a manifest can be large: not sent to every poll

    @extend_schema_field(OpenApiTypes.FLOAT)
    def get_eta_seconds(self, job: Job) -> float | None:
        return None if job.eta is None else round(job.eta.total_seconds(), 1)

    @extend_schema_field(
        {"type": "array", "items": {"type": "object", "properties": {"phase": {"type": "string"},
                                                                     "seconds": {"type": "number"}}}}
    )  # fmt: skip
    def get_phases(self, job: Job) -> list[dict[str, Any]]:
        return [{"phase": name, "seconds": seconds} for name, seconds in job.measured_phases]

    @extend_schema_field({"type": "object", "nullable": True, "additionalProperties": True})
    def get_estimate(self, job: Job) -> Any:
        return job.estimate

    @extend_schema_field(OpenApiTypes.URI)
    def get_change_request_url(self, job: Job) -> str | None:
        if job.change_request_id is None:
            return None
        return link("change-request-detail", self.context, pk=job.change_request_id)
