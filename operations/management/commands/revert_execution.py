"""``manage.py revert_execution ID``: preview (and with --execute, run) the revert of an execution: an ALTER's from its
before-image, a merge's by deleting exactly the id ranges it imported (``operations.merge.run.merge_revert_run``)."""

from __future__ import annotations

import getpass
import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from catalog_admin.errors import ApplicationError
from operations.management.commands.hive_ddl import format_preview
from operations.merge.workflow import MERGE, MERGE_REVERT
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
        parser.add_argument(
            "--include-hive-rows",
            action="store_true",
            help="a merge: also delete rows Hive attached to imported tables since (refused otherwise)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["execute"] and not options["reason"].strip():
            raise CommandError("--execute needs --reason: say why, it is kept in the audit record.")
        execution = Execution.objects.filter(pk=options["execution"]).first()
        if execution is None:
            raise CommandError(f"[not_found] Execution #{options['execution']} does not exist.")
        if execution.operation.get("kind") in (MERGE, MERGE_REVERT):
            self._revert_merge(execution, options)
            return
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

    def _revert_merge(self, execution: Execution, options: dict[str, Any]) -> None:
        from operations.merge.changes import merge_revert_change
        from operations.merge.run import merge_revert_run

        try:
            change = merge_revert_change(execution, include_hive_rows=options["include_hive_rows"])
            self.stdout.write(change.statement)
            self.stdout.write(json.dumps(change.summary, indent=2))
            if options["execute"]:
                actor = options["actor"] or f"operator:{getpass.getuser()}"
                done = merge_revert_run(change, actor=actor, source="cli", reason=options["reason"])
                self.stdout.write(
                    self.style.SUCCESS(f"Reverted #{execution.pk} as #{done.pk} in {done.duration_ms} ms.")
                )
        except ImportError as exc:
            raise CommandError(f"[invalid_state] Merge revert is not available on this console ({exc}).") from exc
        except ApplicationError as exc:
            raise CommandError(f"[{exc.code}] {exc.message}") from exc
