"""
The pages under concurrent load, served as in production (issue 29's goal: 16 clients on this two-core machine,
table page >= 50 req/s, partitions page >= 30 req/s, change-request list >= 50 req/s, each p99 < 1 s, 0 errors).

    .venv/bin/python benchmarks/page_load.py [--partitions 100000] [--clients 16] [--seconds 20] [--keep]
        [--before COMMIT] [--rounds 1]

Creates PostgreSQL databases ``ca_bench_load`` (a Hive 3.1 metastore seeded by ``seed_metastore``: demo content
and ``bench.events`` with P partitions and real directories) and ``ca_bench_load_console`` (the console's own state,
with 500 change requests whose stored previews are each 100 KB, as big as a bounded preview gets), starts the web
tier as ``bin/serve web`` does (gunicorn with the production settings, its default workers and threads), signs a
steward in, and for each page runs ``--clients`` keep-alive HTTP clients (threads) for ``--seconds`` after a warm-up,
counting answers, errors and latencies. The metastore is vacuumed and analysed after seeding, as autovacuum keeps a
production metastore (this machine's PostgreSQL runs with autovacuum off). With ``--before``, the code of that commit
(extracted by ``common.code_at``) is served the same way on the same databases right after this code, ``--rounds``
times in turn: the baseline in the same run. The load average before and after is printed beside the figures: on a
machine doing other work the numbers are that machine's. Results go to ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import http.client
import os
import secrets
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from common import REPO, code_at, recreate_metastore, write_section

METASTORE_DB = "ca_bench_load"
CONSOLE_DB = "ca_bench_load_console"
PAGES = {
    "table page (bench.events)": "/m/bench/db/bench/t/events/",
    "partitions page (bench.events, first page)": "/m/bench/db/bench/t/events/partitions/",
    "change-request list": "/changes/",
}
GOALS = {"table page (bench.events)": 50, "partitions page (bench.events, first page)": 30, "change-request list": 50}
PREVIEW_BYTES = 100_000
REQUESTS = 500


@dataclass(frozen=True)
class PageResult:
    name: str
    answers: int
    errors: int
    seconds: float
    latencies_ms: list[float]

    @property
    def rate(self) -> float:
        return self.answers / self.seconds

    def percentile(self, share: float) -> float:
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--keep", action="store_true", help="reuse the seeded databases of an earlier run")
    parser.add_argument("--before", default="", help="a commit served the same way, in the same run")
    parser.add_argument("--rounds", type=int, default=1, help="how many times each code serves every page, in turn")
    args = parser.parse_args()

    env = _environment()
    os.environ.update(env)
    if not args.keep:
        recreate_metastore(METASTORE_DB, "3.1.0")
        _recreate_database(CONSOLE_DB)
    cookie = _prepare(args)
    codes = {"this code": REPO, **({f"`{args.before}`": _old_code(args.before, env)} if args.before else {})}
    load_before = os.getloadavg()
    results: list[tuple[str, PageResult]] = []
    for _ in range(args.rounds):
        for label, folder in codes.items():
            port = _free_port()
            with _web_tier({**env, **_static_of(folder)}, port, folder):
                results += [(label, _run_page(name, path, port, cookie, args)) for name, path in PAGES.items()]
    load_after = os.getloadavg()
    _report(args, results, load_before, load_after)


def _static_of(folder: Path) -> dict[str, str]:
    """Where ``folder``'s code keeps its collected static files (its own, for an earlier commit's)."""
    return {} if folder == REPO else {"CATALOG_ADMIN_VAR": str(folder / "var")}


def _old_code(commit: str, env: dict[str, str]) -> Path:
    """The code of ``commit``, its static files collected (it serves the databases this code migrated)."""
    folder = code_at(commit)
    (folder / "var").mkdir(exist_ok=True)
    command = [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"]
    subprocess.run(command, cwd=folder, env={**os.environ, **env, **_static_of(folder)}, check=True)
    return folder


def _environment() -> dict[str, str]:
    var = REPO / "var" / "bench-load"
    var.mkdir(parents=True, exist_ok=True)
    return {
        "DJANGO_SETTINGS_MODULE": "catalog_admin.settings_production",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,testserver",
        "DJANGO_SECURE_SSL_REDIRECT": "0",
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{CONSOLE_DB}",
        "METASTORES": f"bench=postgresql://postgres@127.0.0.1:5432/{METASTORE_DB}",
        "CATALOG_ADMIN_VAR": str(var),
    }


def _recreate_database(name: str) -> None:
    psql = ["psql", "-h", "127.0.0.1", "-U", "postgres", "-q", "-d", "postgres"]
    drop, create = f"DROP DATABASE IF EXISTS {name} WITH (FORCE)", f"CREATE DATABASE {name}"
    subprocess.run([*psql, "-c", drop, "-c", create], check=True, capture_output=True)


def _vacuum_analyze(name: str) -> None:
    psql = ["psql", "-h", "127.0.0.1", "-U", "postgres", "-q", "-d", name]
    subprocess.run([*psql, "-c", "VACUUM ANALYZE"], check=True, capture_output=True)


def _prepare(args: argparse.Namespace) -> str:
    """Migrate and seed (unless ``--keep``); a signed-in steward's session cookie."""
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from django.test import Client

    call_command("migrate", verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)  # bin/serve prepare
    if not args.keep:
        started = time.perf_counter()
        warehouse = REPO / "var" / "bench-load" / "warehouse"
        call_command(
            "seed_metastore", metastore="bench", big_table_partitions=args.partitions, warehouse=str(warehouse)
        )
        print(f"seeded the metastore in {time.perf_counter() - started:.0f} s", flush=True)
        _vacuum_analyze(METASTORE_DB)
        _seed_requests()
    steward, _ = User.objects.get_or_create(username="load-steward", defaults={"email": "s@example.org"})
    steward.groups.add(Group.objects.get_or_create(name="steward")[0])
    client = Client()
    client.force_login(steward)
    return f"sessionid={client.cookies['sessionid'].value}"


def _seed_requests() -> None:
    """REQUESTS change requests with 100 KB stored previews each (the list must not read them)."""
    from django.contrib.auth.models import User

    from operations.models import ChangeRequest

    owner, _ = User.objects.get_or_create(username="load-requester", defaults={"email": "r@example.org"})
    preview = {"risk": "high", "findings": ["x" * 1000] * (PREVIEW_BYTES // 1000)}
    ChangeRequest.objects.bulk_create(
        ChangeRequest(
            metastore="bench", database_name="bench", table_name="events", requester=owner, risk="high",
            statement=f"ALTER TABLE bench.events DROP PARTITION (dt < '2024-01-{1 + n % 28:02d}')",
            operation={"kind": "drop_partitions"}, preview=preview, fingerprint=f"{n:064d}",
            state=("draft", "submitted", "approved", "succeeded")[n % 4],
        )
        for n in range(REQUESTS)
    )  # fmt: skip


class _web_tier:  # noqa: N801 (a context manager named for what it holds)
    """``bin/serve web``'s gunicorn serving the code in ``folder`` on ``port``, its access log discarded; stopped on
    leaving."""

    def __init__(self, env: dict[str, str], port: int, folder: Path = REPO) -> None:
        from catalog_admin.serving import gunicorn_command

        command = gunicorn_command(f"127.0.0.1:{port}", settings_module=env["DJANGO_SETTINGS_MODULE"])
        command = [part for part in command if part not in ("--access-logfile", "-")]
        self.process = subprocess.Popen(command, cwd=folder, env={**os.environ, **env}, stdout=subprocess.DEVNULL)
        self.port = port

    def __enter__(self) -> _web_tier:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                connection.request("GET", "/health/")
                connection.getresponse().read()
                return self
            except OSError:
                time.sleep(0.3)
        raise RuntimeError("gunicorn did not answer within 60 s")

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def _run_page(name: str, path: str, port: int, cookie: str, args: argparse.Namespace) -> PageResult:
    """``args.clients`` threads asking for ``path`` until the time is up; the warm-up's answers are not counted."""
    latencies: list[float] = []
    answers = errors = 0
    lock = threading.Lock()
    start = time.monotonic() + args.warmup
    stop = start + args.seconds

    def client() -> None:
        nonlocal answers, errors
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        headers = {"Cookie": cookie, "X-Forwarded-Proto": "https"}
        while (now := time.monotonic()) < stop:
            try:
                connection.request("GET", path, headers=headers)
                answer = connection.getresponse()
                answer.read()
                ok = answer.status == 200
                if not ok and errors < 1:
                    print(f"{path}: HTTP {answer.status} {answer.getheader('Location') or ''}", flush=True)
            except OSError:
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                ok = False
            took = (time.monotonic() - now) * 1000
            if now >= start:
                with lock:
                    answers += ok
                    errors += not ok
                    latencies.append(took)

    threads = [threading.Thread(target=client) for _ in range(args.clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result = PageResult(name, answers, errors, args.seconds, latencies)
    print(
        f"{name}: {result.rate:.1f} req/s, p50 {result.percentile(0.5):.0f} ms, p99 {result.percentile(0.99):.0f} ms, "
        f"{errors} errors",
        flush=True,
    )
    return result


def _report(
    args: argparse.Namespace,
    results: list[tuple[str, PageResult]],
    before: tuple[float, ...],
    after: tuple[float, ...],
) -> None:
    rows = [
        f"| {r.name} | {code} | {r.rate:.1f} | {GOALS[r.name]} | {statistics.median(r.latencies_ms or [0]):.0f} | "
        f"{r.percentile(0.95):.0f} | {r.percentile(0.99):.0f} | {r.errors} |"
        for code, r in results
    ]
    command = f"--partitions {args.partitions} --clients {args.clients} --seconds {args.seconds:g}"
    command += f" --before {args.before} --rounds {args.rounds}" if args.before else ""
    body = "\n".join(
        [
            f"`.venv/bin/python benchmarks/page_load.py {command}` on "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
            f"{os.cpu_count()} cores; load average {before[0]:.1f} before, {after[0]:.1f} after (the load client runs "
            "on the same machine). gunicorn as `bin/serve web` starts it, the console's state on PostgreSQL, "
            f"{REQUESTS} change requests with {PREVIEW_BYTES // 1000} KB previews.",
            "",
            "| page | code | req/s | goal | p50 ms | p95 ms | p99 ms (goal < 1,000) | errors |",
            "|---|---|---:|---:|---:|---:|---:|---:|",
            *rows,
        ]
    )
    write_section(REPO / "docs" / "benchmarks.md", "Pages under load", body)
    print(body)


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


if __name__ == "__main__":
    main()
