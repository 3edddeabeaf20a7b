"""The change-request lifecycle as data: states, their labels and colours, and the transitions between them."""

from __future__ import annotations

from django.db import models

__all__ = (
    "ACTION_STATES",
    "FINISHED_JOB_STATES",
    "TRANSITIONS",
    "ChangeRequestState",
    "Decision",
    "JobKind",
    "JobState",
)


class ChangeRequestState(models.TextChoices):
    DRAFT = "draft", "Draft"
    SUBMITTED = "submitted", "Waiting for approval"
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"
    SCHEDULED = "scheduled", "Scheduled"
    EXECUTING = "executing", "Executing"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"
    REVERTED = "reverted", "Reverted"

    @classmethod
    def colour(cls, state: str) -> str:
        return _COLOURS.get(state, "grey")


_COLOURS = {
    "draft": "grey",
    "submitted": "blue",
    "approved": "green",
    "rejected": "red",
    "scheduled": "purple",
    "executing": "orange",
    "succeeded": "green",
    "failed": "red",
    "cancelled": "grey",
    "reverted": "purple",
}

OPEN_STATES = (
    ChangeRequestState.DRAFT,
    ChangeRequestState.SUBMITTED,
    ChangeRequestState.APPROVED,
    ChangeRequestState.SCHEDULED,
)
TERMINAL_STATES = (
    ChangeRequestState.REJECTED,
    ChangeRequestState.SUCCEEDED,
    ChangeRequestState.FAILED,
    ChangeRequestState.CANCELLED,
    ChangeRequestState.REVERTED,
)

# action -> (states it may start from, state it moves to)
TRANSITIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "submit": ((ChangeRequestState.DRAFT,), ChangeRequestState.SUBMITTED),
    "approve": ((ChangeRequestState.SUBMITTED,), ChangeRequestState.APPROVED),
    "reject": ((ChangeRequestState.SUBMITTED,), ChangeRequestState.REJECTED),
    "schedule": ((ChangeRequestState.APPROVED,), ChangeRequestState.SCHEDULED),
    "execute": ((ChangeRequestState.APPROVED, ChangeRequestState.SCHEDULED), ChangeRequestState.EXECUTING),
    "succeed": ((ChangeRequestState.EXECUTING,), ChangeRequestState.SUCCEEDED),
    "fail": ((ChangeRequestState.EXECUTING,), ChangeRequestState.FAILED),
    "cancel": (
        (
            ChangeRequestState.DRAFT,
            ChangeRequestState.SUBMITTED,
            ChangeRequestState.APPROVED,
            ChangeRequestState.SCHEDULED,
        ),
        ChangeRequestState.CANCELLED,
    ),
    "mark_reverted": ((ChangeRequestState.SUCCEEDED,), ChangeRequestState.REVERTED),
    # the requester takes a rejected request back as a draft, to revise and submit it again (history kept)
    "revise": ((ChangeRequestState.REJECTED,), ChangeRequestState.DRAFT),
    # the scheduler starts a scheduled request whose time has come
    "start": ((ChangeRequestState.SCHEDULED,), ChangeRequestState.EXECUTING),
    # a refreshed preview that changed asks for approvals again
    "reopen": ((ChangeRequestState.SUBMITTED, ChangeRequestState.APPROVED), ChangeRequestState.SUBMITTED),
    # an admin (or reconcile_executions) settles a request whose job died
    "settle_succeeded": ((ChangeRequestState.EXECUTING,), ChangeRequestState.SUCCEEDED),
    "settle_failed": ((ChangeRequestState.EXECUTING,), ChangeRequestState.FAILED),
    # a job cancelled before its point of no return ran nothing: the request is approved again, to execute once more
    # within the same approvals (execute previews again and refuses a stale plan)
    "reopen_cancelled": ((ChangeRequestState.EXECUTING,), ChangeRequestState.APPROVED),
}

# action -> the states it may be taken in: the transitions' own, and the actions that keep the state
ACTION_STATES: dict[str, tuple[str, ...]] = {
    **{action: sources for action, (sources, _target) in TRANSITIONS.items()},
    "edit": (ChangeRequestState.DRAFT,),
    "refresh": (ChangeRequestState.DRAFT, ChangeRequestState.SUBMITTED, ChangeRequestState.APPROVED),
    "revert": (ChangeRequestState.SUCCEEDED,),
    "comment": tuple(ChangeRequestState.values),
    "settle": (ChangeRequestState.EXECUTING,),
}


class Decision(models.TextChoices):
    APPROVE = "approve", "Approved"
    REJECT = "reject", "Rejected"


class JobState(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"
    ERRORED = "errored", "Errored"


# succeeded; failed: the work refused or failed for a reason it names; errored: an unexpected exception (a bug or the
# infrastructure); cancelled.
FINISHED_JOB_STATES = (JobState.SUCCEEDED, JobState.FAILED, JobState.ERRORED, JobState.CANCELLED)


class JobKind(models.TextChoices):
    """What a job does (``Job.kind``); each kind has one runner (``operations.services.jobs.register_job_kind``)."""

    ALTER = "alter", "ALTER statements"
    RELOCATE = "relocate", "Relocation (SET LOCATION … WITH DATA)"
    COMPACT = "compact", "Compaction (CONCATENATE)"
    CONVERT = "convert", "Conversion (SET FILEFORMAT … WITH DATA)"
    ANALYZE = "analyze", "Statistics (ANALYZE TABLE … COMPUTE STATISTICS)"
    MERGE = "merge", "Metastore merge"
    MERGE_REVERT = "merge_revert", "Revert of a metastore merge"
    DATABASE = "database", "CREATE, ALTER or DROP DATABASE"
    PRIVILEGE = "privilege", "GRANT, REVOKE and roles"
    SPARK_PROGRAM = "spark_program", "Spark program"
