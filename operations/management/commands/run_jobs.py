"""``manage.py run_jobs``: the console's worker process.

It is django-tasks-db's worker (the one ``manage.py db_worker`` runs: it takes one ready task at a time from the
console's database with ``SELECT … FOR UPDATE SKIP LOCKED``, so several workers share the queue), plus housekeeping
every ``--interval`` seconds: start the scheduled requests whose time has come, and the chores of
``operations.housekeeping``, each on its own interval (settle jobs whose worker died, forget expired Idempotency-Keys,
``relocations_cleanup``). Start as many as you want jobs at once.

SIGTERM (or SIGINT): the worker takes no more tasks (``jobs.request_stop``). A running Spark job is handed over
within a second: its driver runs on (it is not stopped), the job goes back to the queue with what a successor needs to
follow the driver, and the worker exits; the next worker to claim the job adopts the driver (``spark_jobs``). Any
other running job stops at its next safe point and goes back to the queue for another worker, its verified units
kept; a job past its point of no return (a metastore transaction, a merge's publish) finishes first. A second signal
ends the worker at once.
"""

from __future__ import annotations

import time
from types import FrameType
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import close_old_connections
from django_tasks import DEFAULT_TASK_BACKEND_ALIAS
from django_tasks.base import DEFAULT_TASK_QUEUE_NAME
from django_tasks_db.management.commands.db_worker import Worker

from operations.housekeeping import Housekeeping
from operations.services.due_requests import start_due_requests
from operations.services.jobs import request_stop, worker_name


class Command(BaseCommand):
    help = (
        "Run background tasks (job executions, Spark programs, scheduled starts) and, every --interval seconds, "
        "start due scheduled requests and run the housekeeping whose interval has passed (dead jobs, expired "
        "Idempotency-Keys, relocations_cleanup)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--once", action="store_true", help="housekeeping and every ready task once, then exit")
        parser.add_argument("--interval", type=float, default=2.0, help="seconds between polls (default 2)")
        parser.add_argument("--queue-name", default=DEFAULT_TASK_QUEUE_NAME, help="queues to take tasks from (',')")

    def handle(self, *args: Any, **options: Any) -> None:
        worker = Worker(
            queue_names=options["queue_name"].split(","),
            interval=0,
            batch=True,  # run every ready task, then come back here for housekeeping
            backend_name=DEFAULT_TASK_BACKEND_ALIAS,
            startup_delay=False,
            max_tasks=None,
            worker_id=worker_name()[:64],
        )
        if not options["once"]:
            worker.configure_signals()
            _stop_jobs_too(worker)  # SIGTERM: take no more tasks; the running job is handed over or requeued
        self.stdout.write(f"Worker {worker.worker_id} started.")
        chores = Housekeeping()
        while worker.running:
            self.housekeeping(chores)
            worker.run()
            if options["once"]:
                return
            close_old_connections()  # as after a web request: drop broken or aged connections
            time.sleep(options["interval"])

    def housekeeping(self, chores: Housekeeping) -> None:
        """What no task asks for: due scheduled requests, then the chores whose interval has passed."""
        started = start_due_requests()
        if started:
            self.stdout.write(f"Started {started} scheduled request(s).")
        for line in chores.run_due():
            self.stdout.write(line)


def _stop_jobs_too(worker: Worker) -> None:
    """On SIGTERM/SIGINT/SIGQUIT, also ask the running job to stop at its next safe point, or to hand its Spark driver
    over (``request_stop``)."""
    shutdown = worker.shutdown

    def stop(signum: int, frame: FrameType | None) -> None:
        request_stop()
        shutdown(signum, frame)

    worker.shutdown = stop  # type: ignore[method-assign]
    worker.configure_signals()
