"""``manage.py revert_execution ID``: preview (and with --execute, run) the revert of an execution."""

from __future__ import annotations

import getpass
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from catalog_admin.errors import ApplicationError
from operations.management.commands.hive_ddl import format_preview
from operations.models import Execution
from operations.services.alter import alter_execute
from operations.services.revert import revert_preview


class Command(BaseCommand):
    help = "Preview the revert of an execution from its before-image; --execute runs it (audited)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("execution", type=int, help="the execution id (as printed by hive_ddl --execute)")
        parser.add_argument("--execute", action="store_true", help="execute the revert plan")
        parser.add_argument("--reason", default="", help="why (required with --execute)")
        parser.add_argument("--actor", default="", help="who runs it (default: the OS user)")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["execute"] and not options["reason"].strip():
            raise CommandError("--execute needs --reason: say why, it is kept in the audit record.")
        execution = Execution.objects.filter(pk=options["execution"]).first()
        if execution is None:
            raise CommandError(f"[not_found] Execution #{options['execution']} does not exist.")
        try:
            preview = revert_preview(execution=execution)
            self.stdout.write(format_preview(preview))
            if options["execute"]:
                done = alter_execute(
                    preview=preview,
                    actor=options["actor"] or f"operator:{getpass.getuser()}",
                    source="cli",
                    reason=options["reason"],
                )
                message = f"Reverted #{execution.pk} as #{done.pk} in {done.duration_ms} ms."
                self.stdout.write(self.style.SUCCESS(message))
        except ApplicationError as exc:
            raise CommandError(f"[{exc.code}] {exc.message}") from exc
