"""
``manage.py hive_ddl "ALTER TABLE …"``: preview (and with --execute, run) a Hive DDL statement.

Exit status, for scripts: 0 when the preview can run (or, with --execute, ran); 2 when Hive's rules block it
(the preview is still printed); 1 for any other error (parse error, unknown table, stale preview, failed execution).
A relocation (``SET LOCATION '…' WITH DATA``) or a rewrite (``CONCATENATE``, ``SET FILEFORMAT … WITH DATA``) runs as a
Spark job followed here (its progress printed): 0 only when the data was verified and the metastore swapped.
"""

from __future__ import annotations

import argparse
import getpass
import json
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser, DjangoHelpFormatter
from django.db import transaction

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.selectors.metastores import get_metastore
from operations.changes import change_kind
from operations.choices import FINISHED_JOB_STATES, JobState
from operations.ddl.errors import SUPPORTED_STATEMENTS
from operations.ddl.parser import parse_alter
from operations.ddl.privileges import is_privilege_statement, parse_privilege
from operations.models import Job, JobLogEntry
from operations.preview import DirectoryMove, Preview
from operations.services.alter import alter_execute, alter_preview_statement
from operations.services.data_jobs import enqueue_data_job
from operations.services.database import database_execute
from operations.services.database_kind import database_plan
from operations.services.jobs import run_job, watching_job_logs
from operations.services.privileges import privilege_execute, privilege_plan

BLOCKED_EXIT_STATUS = 2
FOLLOW_SECONDS = 1.0
ENDED = FINISHED_JOB_STATES


class _StatementsHelpFormatter(DjangoHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Django's help, with the statement list kept as written."""


class Command(BaseCommand):
    help = "Preview a Hive DDL statement on a metastore; --execute runs exactly that preview (audited)."

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        """The help ends with the statements the console runs (``SUPPORTED_STATEMENTS``), one per line."""
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.formatter_class = _StatementsHelpFormatter
        parser.epilog = (
            "statements:\n"
            + "\n".join(f"  {statement}" for statement in SUPPORTED_STATEMENTS)
            + "\nnot run: CREATE VIEW and ALTER VIEW … AS (README, Views: the expanded text is Hive's own analysis)"
        )
        return parser

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
        if is_privilege_statement(options["statement"]):
            self._privilege(options)
            return
        try:
            metastore = get_metastore(options["metastore"])
            spec = parse_alter(options["statement"], default_database=options["database"],
                               version=metastore.schema.version)  # fmt: skip
            if not change_kind(spec.as_dict()).on_one_table:  # CREATE/ALTER/DROP DATABASE (issue 27)
                self._database(metastore.name, spec.as_dict(), options)
                return
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

    def _database(self, metastore: str, operation: dict[str, Any], options: dict[str, Any]) -> None:
        """Preview (and with --execute, run) a database statement: its plan printed, blocked with status 2."""
        try:
            plan = database_plan(metastore, operation)
        except ApplicationError as exc:
            raise CommandError(_error_text(exc)) from exc
        result: dict[str, Any] = {"preview": plan.as_dict()}
        if not options["json"]:
            self.stdout.write(format_database_plan(plan.as_dict()))
        if plan.blockers:
            if options["json"]:
                self.stdout.write(json.dumps(result, indent=2, default=str))
            raise CommandError(
                f"[{ErrorCode.HIVE_RULE_VIOLATION}] {len(plan.blockers)} blocker(s): {plan.blockers[0].message}; "
                "nothing was written.",
                returncode=BLOCKED_EXIT_STATUS,
            )
        if options["execute"]:
            try:
                execution = database_execute(
                    plan=plan, actor=options["actor"] or f"operator:{getpass.getuser()}", source="cli",
                    reason=options["reason"],
                )  # fmt: skip
            except ApplicationError as exc:
                raise CommandError(_error_text(exc)) from exc
            result["execution"] = {"id": execution.pk, "state": execution.state, "counts": execution.actual_counts}
            if not options["json"]:
                self.stdout.write(self.style.SUCCESS(f"Executed as #{execution.pk} in {execution.duration_ms} ms."))
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2, default=str))

    def _privilege(self, options: dict[str, Any]) -> None:
        """GRANT/REVOKE and role statements: their rows (granted by ``--actor`` or the OS user), then with --execute
        exactly those, audited (``operations.services.privileges``)."""
        grantor = options["actor"] or getpass.getuser()
        try:
            spec = parse_privilege(options["statement"], default_database=options["database"])
            plan = privilege_plan(options["metastore"], spec, grantor=grantor)
        except ApplicationError as exc:
            raise CommandError(_error_text(exc)) from exc
        result: dict[str, Any] = {"preview": {**plan.as_dict(), "fingerprint": plan.fingerprint}}
        if not options["json"]:
            self.stdout.write(f"Statement : {plan.statement}\nMetastore : {plan.metastore}\nGrantor   : {grantor}")
            self.stdout.write("\n".join(f"  {c.action:<6} {c.table:<10} {c.label}" for c in plan.changes))
            self.stdout.write("\n".join(f"BLOCKED [{b.rule}] {b.message}" for b in plan.blockers))
        if plan.blockers:
            if options["json"]:
                self.stdout.write(json.dumps(result, indent=2, default=str))
            raise CommandError(f"[{ErrorCode.HIVE_RULE_VIOLATION}] {plan.blockers[0].message}; nothing was written.",
                               returncode=BLOCKED_EXIT_STATUS)  # fmt: skip
        if options["execute"]:
            try:
                execution = privilege_execute(plan, actor=grantor, source="cli", reason=options["reason"])
            except ApplicationError as exc:
                raise CommandError(_error_text(exc)) from exc
            result["execution"] = {"id": execution.pk, "state": execution.state, "counts": execution.actual_counts}
            if not options["json"]:
                self.stdout.write(self.style.SUCCESS(f"Executed as #{execution.pk}."))
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
        with transaction.atomic():
            job = enqueue_data_job(
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


def format_database_plan(plan: dict[str, Any]) -> str:
    """A database statement's plan as an operator reads it in a terminal."""
    lines = [
        f"Statement : {plan['statement']}",
        f"Metastore : {plan['metastore']} (Hive schema {plan['schema_version']})",
        f"Risk      : {plan['risk']}" + (" (nothing to do)" if plan["noop"] else ""),
    ]
    lines += [f"  {d['field']}: {d['before']!r} -> {d['after']!r}" for d in plan["diff"]]
    lines += [f"Rows {r['table']:<16} +{r['inserted']} ~{r['updated']} -{r['deleted']}" for r in plan["row_changes"]]
    lines += [f"Directory {d['action']}: {d['source']}" + (f" -> {d['destination']}" if d["destination"] else "")
              for d in plan["directories"]]  # fmt: skip
    lines += [f"Table {t['name']} ({t['type']}, {t['partitions']} partitions): data {t['data']}"
              for t in plan.get("tables", [])]  # fmt: skip
    events = "".join(f", {kind} x{count}" for kind, count in plan.get("table_events", {}).items())
    lines += [f"Event: {plan['event']}{events}"] if plan["event"] else []
    lines += [f"BLOCKED [{b['rule']}] {b['message']}" for b in plan["blockers"]]
    lines += [f"Warning [{w['rule']}] {w['message']}" for w in plan["warnings"]]
    lines.append(f"Fingerprint: {plan['fingerprint']}")
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
            f"Directory: {move.source} -> {move.destination} ({_size(move)}; "
            f"{move.partitions_moving} partitions move with it, {move.partitions_staying} stay; "
            f"source exists: {_known(move.source_exists)}, destination free: {_known(move.destination_free)}, "
            f"same filesystem: {_known(move.same_filesystem)}"
            + (
                f"; a whole folder of {len(move.entries)} directories, listed again before it moves)"
                if move.entries
                else ")"
            )
        )
    copy = preview.data_copy
    if copy is not None and copy.scope is not None and copy.duration is not None:
        took = f"about {copy.estimated_seconds:.1f} s" if copy.estimated_seconds is not None else "unknown"
        lines.append(f"Data to copy: {copy.files} files, {copy.bytes} bytes ({copy.scope.basis})")
        lines.append(f"Copy duration: {took} ({copy.duration.basis})")
        lines += [
            f"  {phase.label}: {'unknown' if phase.seconds is None else f'about {phase.seconds:.1f} s'} ({phase.basis})"
            for phase in copy.duration.phases
        ]
    lines += [f"BLOCKED [{b.rule}] {b.message}" for b in preview.blockers]
    lines += [f"Warning [{w.rule}] {w.message}" for w in preview.warnings]
    hive = preview.hive
    lines.append(
        f"Hive {hive.version} itself: {hive.partition_round_trips} partition round trips, "
        f"{hive.statistics_deleted} statistics deleted, about {hive.estimated_seconds:.1f} s; "
        f"this console: about {preview.estimated_seconds:.2f} s"
        + (" for the swap's statements." if copy is not None else ".")
    )
    lines += [f"  {note}" for note in hive.notes]
    lines.append(f"Fingerprint: {preview.fingerprint}")
    return "\n".join(lines)


def _size(move: DirectoryMove) -> str:
    """A move's files and bytes, ``about`` them with the sample when they were scaled from one."""
    size = f"{_known(move.files)} files, {_known(move.bytes)} bytes"
    if not move.sampled:
        return size
    counted, found = move.sampled
    return f"about {size}, scaled from {counted} of the {found} partition directories inside"


def _known(value: object) -> str:
    """A yes/no or a number, or 'unknown' where the console cannot look (no client for the filesystem)."""
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return f"{value:,}" if isinstance(value, int) else str(value)
