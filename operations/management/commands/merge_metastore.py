"""
``manage.py merge_metastore --source S --target T``: preview merging databases of one metastore into another.

Exit status, for scripts: 0 when the merge could run (with ``--execute``: ran); 2 when it is blocked (the preview is
still printed, nothing is written); 1 for any other error (unknown metastore or database, malformed rename or rule, a
failed execution).

``--execute --reason R`` runs exactly the printed preview under the same governance as ``hive_ddl --execute``: the
operator at the console's host is trusted to act without a change request, and the run is an audited ``Execution``
(source ``cli``, actor ``operator:<OS user>`` or ``--actor``, the reason kept), undone by ``revert_execution ID``.

``--resume ID --reason R`` finishes an import that stopped before publishing (a crash or a failed job: its journal
skips the units already copied), and ``--revert-import ID --reason R`` deletes such an import's invisible rows
instead; both audited. A merge preview is blocked (``unfinished_merge``) while such an import exists.
"""

from __future__ import annotations

import getpass
import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from catalog_admin.errors import ApplicationError, ErrorCode
from operations.merge.execute import merge_resume
from operations.merge.plan import DatabaseImport, MergePreview
from operations.merge.preview import merge_preview
from operations.merge.request import MergeRequest, parse_location_rule, parse_rename
from operations.merge.revert import merge_revert
from operations.merge.run import merge_run
from operations.merge.workflow import MergeChange
from operations.models import MergeImport
from operations.services.audit import record_audit

BLOCKED_EXIT_STATUS = 2


class Command(BaseCommand):
    help = "Preview merging databases of a source metastore into a target metastore (nothing is written)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--source", help="registered metastore to import from")
        parser.add_argument("--target", help="registered metastore to import into")
        parser.add_argument("--databases", default="", help="comma-separated source databases (default: all)")
        parser.add_argument("--rename", action="append", default=[], help="src_db=new_name (repeatable)")
        parser.add_argument("--location-rule", action="append", default=[], help="OLD=NEW location prefix map")
        parser.add_argument("--json", action="store_true", help="print the preview as JSON")
        parser.add_argument("--execute", action="store_true", help="run the previewed merge (audited)")
        parser.add_argument("--reason", default="", help="why (required with --execute; kept in the audit record)")
        parser.add_argument("--actor", default="", help="who runs it (default: the OS user)")
        parser.add_argument("--resume", type=int, metavar="ID", help="finish merge import ID that stopped (audited)")
        parser.add_argument(
            "--revert-import", type=int, metavar="ID", help="delete the rows of merge import ID that stopped (audited)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        journal = options["resume"] or options["revert_import"]
        needs_reason = "--resume/--revert-import" if journal else "--execute" if options["execute"] else ""
        if needs_reason and not options["reason"].strip():
            raise CommandError(f"{needs_reason} needs --reason: say why, it is kept in the audit record.")
        if journal:
            self._finish_import(journal, resume=bool(options["resume"]), options=options)
            return
        if not options["source"] or not options["target"]:
            raise CommandError("--source and --target are required (or --resume / --revert-import ID).")
        try:
            preview = merge_preview(_request(options))
        except ApplicationError as exc:
            raise CommandError(f"[{exc.code}] {exc.message}") from exc
        text = json.dumps(preview.as_dict(), indent=2) if options["json"] else format_merge_preview(preview)
        self.stdout.write(text)
        if preview.blockers:
            raise CommandError(
                f"[{ErrorCode.HIVE_RULE_VIOLATION}] {len(preview.blockers)} blocker(s): {preview.blockers[0].message}",
                returncode=BLOCKED_EXIT_STATUS,
            )
        if options["execute"]:
            self._execute(MergeChange(preview), options)

    def _execute(self, change: MergeChange, options: dict[str, Any]) -> None:
        try:
            execution = merge_run(
                change,
                actor=options["actor"] or f"operator:{getpass.getuser()}",
                source="cli",
                reason=options["reason"],
                report=lambda event: self.stdout.write(f"  {event}"),
            )
        except ApplicationError as exc:
            raise CommandError(f"[{exc.code}] {exc.message}") from exc
        message = (
            f"Merged as execution #{execution.pk} in {execution.duration_ms} ms "
            f"(undo: manage.py revert_execution {execution.pk} --execute --reason R)."
        )
        self.stdout.write(self.style.SUCCESS(message))

    def _finish_import(self, pk: int, *, resume: bool, options: dict[str, Any]) -> None:
        merge = MergeImport.objects.filter(pk=pk).first()
        if merge is None:
            raise CommandError(f"[{ErrorCode.NOT_FOUND}] Merge import #{pk} does not exist.")
        actor = options["actor"] or f"operator:{getpass.getuser()}"
        action = "resume_merge" if resume else "revert_merge_import"
        try:
            if resume:
                merge = merge_resume(merge, report=lambda event: self.stdout.write(f"  {event}"))
            else:
                merge = merge_revert(merge)
        except ApplicationError as exc:
            _audit_import(merge, actor, action, "refused", options["reason"], error=exc.message)
            raise CommandError(f"[{exc.code}] {exc.message}") from exc
        _audit_import(merge, actor, action, merge.state, options["reason"])
        self.stdout.write(self.style.SUCCESS(f"Merge import #{merge.pk} is {merge.state}."))


def _audit_import(merge: MergeImport, actor: str, action: str, outcome: str, reason: str, error: str = "") -> None:
    record_audit(
        actor=actor,
        action=action,
        outcome=outcome,
        execution_id=merge.execution_id,
        metastore=merge.target,
        database_name=",".join(merge.request.get("databases", [])),
        table_name="*",
        statement=f"merge import #{merge.pk} from {merge.source} into {merge.target}",
        details={"source": "cli", "reason": reason, "merge_import": merge.pk, "error": error},
    )


def _request(options: dict[str, Any]) -> MergeRequest:
    databases = tuple(dict.fromkeys(d.strip().lower() for d in options["databases"].split(",") if d.strip()))
    return MergeRequest(
        source=options["source"],
        target=options["target"],
        databases=databases,
        renames=tuple(parse_rename(text) for text in options["rename"]),
        location_rules=tuple(parse_location_rule(text) for text in options["location_rule"]),
    )


def format_merge_preview(preview: MergePreview) -> str:
    """The preview as a terminal report."""
    request = preview.request
    lines = [
        f"Merge {request.source} ({preview.source_version}) into {request.target} ({preview.target_version})",
        f"fingerprint {preview.fingerprint}",
        "",
        "Databases:",
        *(_database_line(d) for d in preview.databases),
        "",
        "Rows coming in (ids the target would give now; a preview reserves nothing):",
        *(f"  {t.table:<26} {t.rows:>10}  {_ids(t.first_id, t.last_id)}" for t in preview.tables),
    ]
    if preview.conversions:
        lines += ["", "Converted between versions:"]
        lines += [f"  {c.table}.{c.column}: {c.action}, {c.value}" for c in preview.conversions]
    if preview.views:
        lines += ["", "Views rewritten to follow their renamed databases:"]
        lines += [f"  {v.view}: {v.expanded_text or v.original_text}" for v in preview.views]
    lines += ["", "Not carried:", *(f"  {n.table} ({n.rows} row(s)): {n.reason}" for n in preview.not_carried)]
    if preview.blockers:
        lines += ["", "Blocked:", *(f"  [{b.code}] {b.message}" for b in preview.blockers)]
    else:
        lines += ["", "Not blocked: the merge can run."]
    if preview.estimate is not None:
        estimate = preview.estimate
        lines += [
            "",
            f"Estimated duration: {estimate.seconds:,} s for {estimate.partitions:,} partition(s) at "
            f"{estimate.partitions_per_second:,.0f} partitions/s ({estimate.basis}).",
        ]
    return "\n".join(lines) + "\n"


def _database_line(d: DatabaseImport) -> str:
    return f"  {d.name} -> {d.new_name}  {d.tables} table(s)  {d.location} -> {d.new_location}"


def _ids(first: int | None, last: int | None) -> str:
    if first is None:
        return "(keyed by its parent)"
    return f"ids {first}..{last}" if last is not None else f"(next id {first})"
