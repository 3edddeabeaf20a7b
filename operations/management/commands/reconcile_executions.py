"""``manage.py reconcile_executions [--dry-run]``: settle executions a dying process left with directories moved."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from operations.services.reconcile import Reconciliation, reconcile_executions


class Command(BaseCommand):
    help = (
        "Find executions left RUNNING with journalled directory moves; move the directories back where the metastore "
        "transaction never committed, or record the commit where it did. --dry-run only reports."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="report what would be done, change nothing")
        parser.add_argument("--metastore", default=None, help="only executions on this metastore")
        parser.add_argument("--execution", type=int, default=None, help="only this execution id")

    def handle(self, *args: Any, **options: Any) -> None:
        results = reconcile_executions(
            dry_run=options["dry_run"], metastore=options["metastore"], execution_id=options["execution"]
        )
        if not results:
            self.stdout.write("No execution needs reconciling.")
            return
        for result in results:
            self.stdout.write(format_reconciliation(result))


def format_reconciliation(result: Reconciliation) -> str:
    """One execution's outcome as an operator reads it."""
    would = "would be " if result.dry_run else ""
    conflicts = [move for move in result.moves if move.action.startswith("conflict")]
    if result.committed is None:
        verdict = f"left as it is: {result.reason}"
    elif result.committed:
        verdict = f"committed ({result.reason}): journal {would}marked COMMITTED, execution {would}RECONCILED"
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
