"""``manage.py export_audit [--format csv|json]``: the audit log on standard output, with the chain's anchor (its head
hash and record count; ``verify_audit --expect-head`` checks it later)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from operations.models import AuditRecord
from operations.services.audit import export_audit


class Command(BaseCommand):
    help = "Export the audit log as CSV or JSON."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--format", choices=("csv", "json"), default="csv")

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(export_audit(AuditRecord.objects.all(), options["format"]), ending="")
