"""``manage.py verify_audit [--expect-head HASH[:COUNT]]``: recompute the audit chain and name every record that was
tampered with; with the anchor of an earlier export, also detect that the chain's tail was cut."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from operations.models import AuditRecord
from operations.services.audit import AuditAnchor, anchor_problem, verify_audit_chain


class Command(BaseCommand):
    help = (
        "Verify the audit log's hash chain; exits with an error naming the first broken record. With --expect-head "
        "(the anchor every export ends with), also fails when that record is no longer in the chain at its position."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--expect-head",
            metavar="HASH[:COUNT]",
            help="an export's anchor: the chain must still hold the record with this hash, as record COUNT",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        expected = self._anchor(options["expect_head"])
        problems = verify_audit_chain()
        total = AuditRecord.objects.count()
        if problems:
            for problem in problems:
                self.stderr.write(f"Audit record #{problem.record_id}: {problem.problem}")
            raise CommandError(f"The audit chain is broken at record #{problems[0].record_id} ({total} records).")
        if expected is not None and (problem := anchor_problem(expected)) is not None:
            raise CommandError(f"The audit chain does not hold the expected head: {problem}.")
        anchored = f", and holds the expected head {expected}" if expected is not None else ""
        self.stdout.write(self.style.SUCCESS(f"The audit chain of {total} records is intact{anchored}."))

    def _anchor(self, text: str | None) -> AuditAnchor | None:
        if text is None:
            return None
        try:
            return AuditAnchor.parse(text)
        except ValueError as exc:
            raise CommandError(f"--expect-head: {exc}") from exc
