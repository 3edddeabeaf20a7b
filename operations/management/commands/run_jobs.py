"""``manage.py run_jobs``: a worker that runs queued jobs and scheduled change requests, and forgets expired
Idempotency-Keys."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from operations.services.idempotency import purge_expired_idempotency_keys
from operations.services.jobs import run_pending_jobs, start_due_requests


class Command(BaseCommand):
    help = "Run queued jobs and change requests whose scheduled window has come (--once, or loop)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--once", action="store_true", help="run what is pending, then exit")
        parser.add_argument("--interval", type=float, default=5.0, help="seconds between polls")

    def handle(self, *args: Any, **options: Any) -> None:
        while True:
            started = start_due_requests()
            if started:
                self.stdout.write(f"Started {started} scheduled request(s).")
            ran = run_pending_jobs()
            if ran:
                self.stdout.write(f"Ran {ran} job(s).")
            purged = purge_expired_idempotency_keys()
            if purged:
                self.stdout.write(f"Forgot {purged} expired Idempotency-Key(s).")
            if options["once"]:
                return
            time.sleep(options["interval"])
