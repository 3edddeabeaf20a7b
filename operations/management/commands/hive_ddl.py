"""
``manage.py hive_ddl "ALTER TABLE …"``: preview (and with --execute, run) a Hive DDL statement.

Exit status, for scripts: 0 when the preview can run (or, with --execute, ran); 2 when Hive's rules block it
(the preview is still printed); 1 for any other error (parse error, unknown table, stale preview, failed execution).
A relocation (``SET LOCATION '…' WITH DATA``) or a rewrite (``CONCATENATE``, ``SET FILEFORMAT … WITH DATA``) runs as a
Spark job followed here (its progress printed): 0 only when the data was verified and the metastore swapped.
"""

from __future__ import annotations

import getpass
import json
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.selectors.metastores import get_metastore
from operations.choices import FINISHED_JOB_STATES, JobState
from operations.models import Job, JobLogEntry
from operations.preview import Preview
from operations.services.alter import alter_execute, alter_preview_statement
from operations.services.analyze_jobs import enqueue_analyze
from operations.services.jobs import run_job, watching_job_logs
from operations.services.relocate_jobs import enqueue_relocation

BLOCKED_EXIT_STATUS = 2
FOLLOW_SECONDS = 1.0
ENDED = FINISHED_JOB_STATES


class Command(BaseCommand):
    help = "Preview a Hive ALTER TABLE statement on a metastore; --execute runs exactly that preview (audited)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("statement", help='e.g. "ALTER TABLE sales.orders RENAME TO sales.orders_v2"')
        parser.add_argument("--metastore", default=None, help="registered metastore name (default: the default one)")
        parser.add_argument("--database", default="default", help="database of unqualified table names")
        parser.add_argument("--json", action="store_true", help="print the preview (and execution) as JSON")
        parser.add_argument("--execute", action="store_true", help="execute the previewed plan")
        parser.add_argument("--reason", default="", help="why (required with --execute; kept in the audit record)")
        parser.add_argument("--actor", default="", help="who runs it (default: the OS user)")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["execute"] and not options["reason"].strip():
            raise CommandError("--execute needs --reason: say why, it is kept in the audit record.")
        try:
            metastore = get_metastore(options["metastore"])
            preview = alter_preview_statement(
                metastore=metastore, statement=options["statement"], default_database=options["database"]
            )
        except ApplicationError as exc:
            raise CommandError(_error_text(exc)) from exc
        result: dict[str, Any] = {"preview": preview.as_dict()}
        if not options["json"]:
            self.stdout.write(format_preview(preview))
        if preview.blockers:
            if options["json"]:
                self.stdout.write(json.dumps(result, indent=2, default=str))
            raise CommandError(
                f"[{ErrorCode.HIVE_RULE_VIOLATION}] {len(preview.blockers)} blocker(s): {preview.blockers[0].message}; "
                "nothing was written.",
                returncode=BLOCKED_EXIT_STATUS,
            )
        if options["execute"]:
            result["execution"] = self._execute(preview, options)
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2, default=str))

    def _execute(self, preview: Preview, options: dict[str, Any]) -> dict[str, Any]:
        if preview.data_copy is not None:
            return self._relocate(preview, options)
        try:
            execution = alter_execute(
                preview=preview,
                actor=options["actor"] or f"operator:{getpass.getuser()}",
                source="cli",
                reason=options["reason"],
            )
        except ApplicationError as exc:
            raise CommandError(_error_text(exc)) from exc
        if not options["json"]:
            self.stdout.write(self.style.SUCCESS(f"Executed as #{execution.pk} in {execution.duration_ms} ms."))
        return {
            "id": execution.pk,
            "state": execution.state,
            "duration_ms": execution.duration_ms,
            "counts": execution.actual_counts,
        }

    def _relocate(self, preview: Preview, options: dict[str, Any]) -> dict[str, Any]:
        """Run the relocation as a Spark job (this process runs it, unless a worker claimed it first), printing its
        progress; succeed only when it copied, verified and swapped."""
        enqueue = enqueue_analyze if preview.spec.kind == "analyze" else enqueue_relocation
        with transaction.atomic():
            job = enqueue(
                preview, actor=options["actor"] or f"operator:{getpass.getuser()}", approved=preview.as_dict(),
                source="cli", reason=options["reason"],
            )  # fmt: skip
        job_id = job.pk
        label = {"rewrite": "Rewrite", "analyze": "Analyze"}.get(job.program, "Relocation")
        self.stdout.write(f"{label} job #{job_id} on {job.spark_master}")
        with watching_job_logs(lambda logged, line: logged == job_id and self.stdout.write(f"  {line}")):
            job = run_job(job_id)  # a worker that claimed it first runs it instead: then follow its log
        if job.state not in ENDED:
            job = self._follow(job)
        execution = (job.result or {}).get("execution")
        if job.state != JobState.SUCCEEDED or execution is None:
            raise CommandError(f"[{ErrorCode.EXECUTION_FAILED}] Job #{job.pk} {job.state}: {job.error or job.message}")
        if not options["json"]:
            done = {"rewrite": "Rewritten", "analyze": "Analyzed"}.get(job.program, "Copied")
            self.stdout.write(self.style.SUCCESS(f"{done}, verified and swapped as execution #{execution}."))
        return {"id": execution, "job": job.pk, "state": job.state, "result": job.result}

    def _follow(self, job: Job) -> Job:
        """Print the log lines of a job another worker runs until it ends."""
        printed = 0
        while True:
            job.refresh_from_db()
            for line in JobLogEntry.objects.filter(job=job, pk__gt=printed).order_by("pk"):
                self.stdout.write(f"  {line.message}")
                printed = line.pk
            if job.state in ENDED:
                return job
            time.sleep(FOLLOW_SECONDS)


def _error_text(exc: ApplicationError) -> str:
    """The error as one line, then what is supported when the statement could not be parsed."""
    lines = [f"[{exc.code}] {exc.message}"]
    if exc.code == ErrorCode.DDL_PARSE_ERROR:
        lines += ["Supported statements:", *(f"  {s}" for s in exc.details.get("supported", ()))]
    return "\n".join(lines)


def format_preview(preview: Preview) -> str:
    """The preview as an operator reads it in a terminal."""
    lines = [
        f"Statement : {preview.statement}",
        f"Metastore : {preview.metastore} (Hive schema {preview.schema_version})",
        f"Risk      : {preview.risk}",
        f"Partitions touched: {preview.partitions_touched}; statistics rows kept and re-labelled: "
        f"{preview.statistics_moved}; statistics rows dropped: {preview.statistics_dropped}",
    ]
    if preview.diff:
        lines.append("Changes:")
        lines += [f"  {field}: {before!r} -> {after!r}" for field, before, after in preview.diff]
    if preview.row_changes:
        lines.append("Rows (insert/update/delete):")
        lines += [f"  {r.table:<16} {r.inserted:>9} {r.updated:>9} {r.deleted:>9}" for r in preview.row_changes]
    for move in preview.moves:
        lines.append(
            f"Directory: {move.source} -> {move.destination} ({_known(move.files)} files, {_known(move.bytes)} bytes; "
            f"{move.partitions_moving} partitions move with it, {move.partitions_staying} stay; "
            f"source exists: {_known(move.source_exists)}, destination free: {_known(move.destination_free)}, "
            f"same filesystem: {_known(move.same_filesystem)})"
        )
    copy = preview.data_copy
    if copy is not None and copy.scope is not None and copy.duration is not None:
        took = f"about {copy.estimated_seconds:.1f} s" if copy.estimated_seconds is not None else "unknown"
        lines.append(f"Data to copy: {copy.files} files, {copy.bytes} bytes ({copy.scope.basis})")
        lines.append(f"Copy duration: {took} ({copy.duration.basis})")
    lines += [f"BLOCKED [{b.rule}] {b.message}" for b in preview.blockers]
    lines += [f"Warning [{w.rule}] {w.message}" for w in preview.warnings]
    hive = preview.hive
    lines.append(
        f"Hive {hive.version} itself: {hive.partition_round_trips} partition round trips, "
        f"{hive.statistics_deleted} statistics deleted, about {hive.estimated_seconds:.1f} s; "
        f"this console: about {preview.estimated_seconds:.2f} s."
    )
    lines += [f"  {note}" for note in hive.notes]
    lines.append(f"Fingerprint: {preview.fingerprint}")
    return "\n".join(lines)


def _known(value: object) -> str:
    """A yes/no or a number, or 'unknown' where the console cannot look (no client for the filesystem)."""
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return f"{value:,}" if isinstance(value, int) else str(value)
