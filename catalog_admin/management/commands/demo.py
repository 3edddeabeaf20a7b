"""``manage.py demo``: prepare the embedded demo (console DB, demo metastore, users) and serve the console."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connections

from catalog_admin.metastore_ddl import DEFAULT_SCHEMA_VERSION, create_metastore_schema
from catalog_admin.metastores import DEMO_METASTORE_NAME, MetastoreConfig
from catalog_admin.seeding import SeedOptions, seed_metastore
from catalog_admin.seeding.demo_scale import DEMO_SCALE_PARTITIONS, add_demo_scale_table
from catalog_admin.selectors.metastores import clear_schema_cache, get_metastore
from catalog_admin.serving import gunicorn_command

__all__ = ("DEMO_USERS", "Command", "stop_worker")

DEFAULT_PASSWORD = "demo-password"
# username -> (group, is_staff and is_superuser)
DEMO_USERS = {
    "steward": ("steward", False),
    "approver": ("approver", False),
    "viewer": ("viewer", False),
    "admin": ("admin", True),
}


class Command(BaseCommand):
    help = (
        "Prepare the embedded demo idempotently (migrate the console database, create and seed the SQLite demo "
        "metastore, create the demo users) and serve the console with gunicorn and WhiteNoise."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--addr", default="127.0.0.1:8000", help="address:port to serve on (default 127.0.0.1:8000)"
        )
        parser.add_argument("--no-serve", action="store_true", help="only prepare; do not start the server")
        parser.add_argument(
            "--no-worker", action="store_true", help="do not start a job worker (manage.py run_jobs) beside the server"
        )
        parser.add_argument(
            "--scale-partitions",
            type=int,
            default=DEMO_SCALE_PARTITIONS,
            help=f"partitions of the demo's table at scale, bench.events (default {DEMO_SCALE_PARTITIONS:,}; 0: none)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        config = _demo_config()
        call_command("migrate", database="default", interactive=False, verbosity=0)
        self.stdout.write("Console database migrated.")
        self.prepare_metastore(config)
        if options["scale_partitions"]:
            self.prepare_scale_table(config, options["scale_partitions"])
        password = os.environ.get("DEMO_PASSWORD") or DEFAULT_PASSWORD
        for username, (group, superuser) in DEMO_USERS.items():
            _ensure_user(username, password, group, superuser=superuser)
        self.write_instructions(options["addr"], password)
        if options["no_serve"]:
            return
        worker = None if options["no_worker"] else self.start_worker()
        try:
            self.serve(options["addr"])
        finally:
            if worker is not None:
                stop_worker(worker)

    def start_worker(self) -> subprocess.Popen[bytes]:
        """A job worker process (``manage.py run_jobs``) beside the server, on the same settings and databases."""
        worker = subprocess.Popen([sys.executable, str(Path(settings.BASE_DIR) / "manage.py"), "run_jobs"])
        self.stdout.write(f"Job worker started (pid {worker.pid}); it stops with the server.")
        return worker

    def serve(self, addr: str) -> None:
        """Run gunicorn (WhiteNoise serves the static files) until it stops, Ctrl-C or SIGTERM."""
        call_command("collectstatic", interactive=False, verbosity=0)
        server = subprocess.Popen(gunicorn_command(addr, workers=2))
        signal.signal(signal.SIGTERM, lambda *_: server.terminate())
        try:
            server.wait()
        except KeyboardInterrupt:
            server.terminate()
            server.wait()

    def prepare_metastore(self, config: MetastoreConfig) -> None:
        """Create the demo metastore's schema when its database is new, then seed it (existing content is kept)."""
        database = Path(settings.DATABASES[config.alias]["NAME"])
        database.parent.mkdir(parents=True, exist_ok=True)
        Path(config.warehouse).mkdir(parents=True, exist_ok=True)
        if not connections[config.alias].introspection.table_names():
            create_metastore_schema(config.alias, DEFAULT_SCHEMA_VERSION, config.warehouse)
            clear_schema_cache()
            self.stdout.write(f"Created demo metastore {database} (Hive {DEFAULT_SCHEMA_VERSION}).")
        report = seed_metastore(get_metastore(config.name), SeedOptions(warehouse=config.warehouse))
        rows = sum(report.counts.values())
        if rows:
            self.stdout.write(
                f"Demo metastore seeded: {rows} rows, {report.files} data files under {config.warehouse}."
            )
        else:
            self.stdout.write(f"Demo metastore {database} is already seeded.")

    def prepare_scale_table(self, config: MetastoreConfig, partitions: int) -> None:
        """Add bench.events with its partitions, files and anomalies, once (the first start takes longer)."""
        started = time.monotonic()
        added = add_demo_scale_table(get_metastore(config.name), config.warehouse, partitions)
        if added:
            self.stdout.write(f"Added bench.events: {added:,} partitions in {time.monotonic() - started:.0f} s.")

    def write_instructions(self, addr: str, password: str) -> None:
        host, _, port = addr.rpartition(":")
        host = "127.0.0.1" if host in ("", "0.0.0.0") else host
        self.stdout.write(self.style.SUCCESS(f"\nOpen http://{host}:{port}/ and sign in as one of:"))
        for username, (group, _) in DEMO_USERS.items():
            self.stdout.write(f"  {username:<9} role {group}")
        self.stdout.write(f"Password (all users): {password}   (set DEMO_PASSWORD to choose another)\n")


def stop_worker(worker: subprocess.Popen[bytes], grace_seconds: float = 30.0) -> None:
    """Ask the worker to stop after its running task (SIGTERM); kill it when it has not within ``grace_seconds``."""
    if worker.poll() is not None:
        return
    worker.send_signal(signal.SIGTERM)
    try:
        worker.wait(timeout=grace_seconds)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait()


def _demo_config() -> MetastoreConfig:
    config = next((c for c in settings.METASTORE_CONFIGS if c.name == DEMO_METASTORE_NAME), None)
    if config is None or settings.DATABASES[config.alias]["ENGINE"] != "django.db.backends.sqlite3":
        raise CommandError(
            "The demo runs on the embedded default: unset METASTORES and METASTORE_URL to use the demo metastore."
        )
    return config


def _ensure_user(username: str, password: str, group: str, *, superuser: bool) -> None:
    user, _ = get_user_model().objects.get_or_create(username=username)
    user.set_password(password)
    user.is_staff = user.is_superuser = superuser
    user.is_active = True
    user.save()
    user.groups.add(Group.objects.get_or_create(name=group)[0])
