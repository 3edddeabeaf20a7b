"""``manage.py reconcile_executions [--dry-run] [--older-than SECONDS]``: settle what a dying process left running:
executions (from their commit marker), then stuck jobs and their requests."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from operations.services.reconcile import Reconciliation, reconcile_executions, sweep_commit_markers
from operations.services.stuck_jobs import JobSettlement, settle_stuck_jobs


class Command(BaseCommand):
    help = (
        "Find executions left RUNNING (with journalled directory moves, or running longer than --older-than); decide "
        "from the commit marker whether the metastore transaction committed; move the directories back where it "
        "did not, or record the commit where it did; then settle stuck jobs and their requests. --dry-run only reports."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="report what would be done, change nothing")
        parser.add_argument("--metastore", default=None, help="only executions on this metastore")
        parser.add_argument("--execution", type=int, default=None, help="only this execution id")
        parser.add_argument(
            "--older-than", type=float, default=None, metavar="SECONDS",
            help="take executions and jobs without a sign of life for this long as abandoned "
            "(default: CATALOG_JOB_HEARTBEAT_TIMEOUT_SECONDS)",
        )  # fmt: skip

    def handle(self, *args: Any, **options: Any) -> None:
        dry_run, older_than = options["dry_run"], options["older_than"]
        results = reconcile_executions(
            dry_run=dry_run, metastore=options["metastore"], execution_id=options["execution"], older_than=older_than
        )
        jobs = [] if options["execution"] else settle_stuck_jobs(
            dry_run=dry_run, older_than=older_than, metastore=options["metastore"]
        )  # fmt: skip
        swept = sweep_commit_markers(dry_run=dry_run, metastore=options["metastore"])
        if not results and not jobs and not swept:
            self.stdout.write("No execution needs reconciling.")
            return
        for result in results:
            self.stdout.write(format_reconciliation(result))
        for job in jobs:
            self.stdout.write(format_job(job))
        if swept:
            self.stdout.write(
                f"{swept} commit marker(s) of finished executions {'would be ' if dry_run else ''}removed"
            )


def format_reconciliation(result: Reconciliation) -> str:
    """One execution's outcome as an operator reads it."""
    would = "would be " if result.dry_run else ""
    conflicts = [move for move in result.moves if move.action.startswith("conflict")]
    if result.committed is None:
        verdict = f"left as it is: {result.reason}"
    elif result.committed:
        verdict = f"committed ({result.reason}): journal {would}marked COMMITTED, execution {would}RECONCILED"
    elif not result.moves:
        verdict = f"never committed ({result.reason}): nothing to move back, execution {would}FAILED"
    elif conflicts:
        verdict = f"never committed ({result.reason}): {len(conflicts)} directory(ies) need a manual check first"
    else:
        verdict = f"never committed ({result.reason}): directories {would}moved back, execution {would}FAILED"
    lines = [f"#{result.execution_id} [{result.metastore}] {result.statement}", f"  {verdict}"]
    for move in result.moves:
        if result.committed:
            lines.append(f"  {move.source} -> {move.destination}: {move.action}")
        else:
            action = f"would be {move.action}" if result.dry_run and move.action == "moved back" else move.action
            lines.append(f"  {move.destination} -> {move.source}: {action}")
    if not result.dry_run and result.committed is not None:
        lines.append(f"  state: {result.state}")
    return "\n".join(lines)


def format_job(settlement: JobSettlement) -> str:
    """One stuck job's outcome as an operator reads it."""
    request = f" (request #{settlement.request_id})" if settlement.request_id else ""
    if settlement.outcome is None:
        return f"job #{settlement.job_id}{request}: left as it is: {settlement.reason}"
    would = "would be " if settlement.dry_run else ""
    return f"job #{settlement.job_id}{request}: {would}{settlement.outcome} ({settlement.reason})"
