"""``manage.py verify_audit``: recompute the audit chain and name every record that was tampered with."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from operations.models import AuditRecord
from operations.services.audit import verify_audit_chain


class Command(BaseCommand):
    help = "Verify the audit log's hash chain; exits with an error naming the first broken record."

    def handle(self, *args: Any, **options: Any) -> None:
        problems = verify_audit_chain()
        total = AuditRecord.objects.count()
        if problems:
            for problem in problems:
                self.stderr.write(f"Audit record #{problem.record_id}: {problem.problem}")
            raise CommandError(f"The audit chain is broken at record #{problems[0].record_id} ({total} records).")
        self.stdout.write(self.style.SUCCESS(f"The audit chain of {total} records is intact."))
