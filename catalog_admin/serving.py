"""How the demo serves the console: gunicorn with WhiteNoise, the same pieces as ``bin/serve`` in production."""

from __future__ import annotations

import os
import sys

__all__ = ("gunicorn_command",)


def gunicorn_command(bind: str, *, workers: int | None = None, settings_module: str | None = None) -> list[str]:
    """The argv running the console's WSGI application under gunicorn on ``bind`` (``host:port``)."""
    count = workers or int(os.environ.get("GUNICORN_WORKERS", "0")) or min(2 * (os.cpu_count() or 1) + 1, 9)
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "catalog_admin.wsgi:application",
        "--bind",
        bind,
        "--workers",
        str(count),
        "--threads",
        os.environ.get("GUNICORN_THREADS", "4"),
        "--timeout",
        os.environ.get("GUNICORN_TIMEOUT", "60"),
        "--access-logfile",
        "-",
    ]
    if settings_module:
        command += ["--env", f"DJANGO_SETTINGS_MODULE={settings_module}"]
    return command
