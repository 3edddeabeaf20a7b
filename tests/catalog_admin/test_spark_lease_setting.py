"""
``CATALOG_SPARK_LEASE_SECONDS`` below 10 stops the console at start-up, naming the setting: a lease shorter than a few
of the driver's beats (every 2 s) would end healthy drivers followed from another host.
"""

from __future__ import annotations

import os
import subprocess
import sys

from django.conf import settings


def settings_loaded_with(**environment: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "import catalog_admin.settings"],
        cwd=settings.BASE_DIR,
        env={**os.environ, **environment},
        capture_output=True,
        text=True,
        check=False,
    )


def test_a_lease_below_ten_seconds_is_refused_at_start_up_naming_the_setting() -> None:
    # when
    loaded = settings_loaded_with(CATALOG_SPARK_LEASE_SECONDS="5")

    # then
    assert loaded.returncode != 0
    assert "ImproperlyConfigured: CATALOG_SPARK_LEASE_SECONDS=5 is below 10" in loaded.stderr


def test_a_lease_of_ten_seconds_or_more_is_taken() -> None:
    # when
    loaded = settings_loaded_with(CATALOG_SPARK_LEASE_SECONDS="10")

    # then
    assert loaded.returncode == 0, loaded.stderr
