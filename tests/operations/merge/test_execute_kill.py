"""
A merge killed with SIGKILL (``CATALOG_ADMIN_KILL_AT``, the hook behind ``operations.spark.programs.merge.fault_point``)
in a process of its own: after the first invisible unit was written (not yet journaled) or inside the publishing
transaction. Either way nothing is visible in the target (every table Hive reads through DBS/TBLS is as before); a
resumed run rewrites the unjournaled unit and completes, or a revert leaves the whole target as before.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connections

from operations.merge.copy_plan import COPY_TABLES
from operations.merge.execute import merge_resume, unfinished_merges
from operations.merge.request import MergeRequest, parse_location_rule
from operations.merge.revert import merge_revert
from operations.models import MergeImport
from tests.fixtures.merge import database_dump, metastore_dump, rewritten_dump

pytestmark = [pytest.mark.matrix, pytest.mark.slow]

SOURCE = "hive31_pg"
RENAMES = (("marketing", "marketing_imported"), ("sales", "sales_imported"))
SCRIPT = """
import json, sys
import django
django.setup()
from operations.merge.execute import merge_execute
from operations.merge.preview import merge_preview
from operations.merge.request import LocationRule, MergeRequest
data = json.loads(sys.argv[1])
request = MergeRequest(source=data["source"], target=data["target"], databases=tuple(data["databases"]),
    renames=tuple(data["renames"].items()), location_rules=tuple(LocationRule(**r) for r in data["location_rules"]))
merge_execute(request, merge_preview(request))
"""


def _killed_merge(request: MergeRequest, point: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``merge_execute`` in its own process on the test databases (the target registered there too), killed at
    ``point``."""
    target = settings.DATABASES[request.target]
    config = next(c for c in settings.METASTORE_CONFIGS if c.name == request.target)
    (tmp_path / "kill_settings.py").write_text(
        "from tests.settings import *\n"
        "from catalog_admin.metastores import MetastoreConfig\n"
        f"DATABASES['default'] = {{**DATABASES['default'], 'NAME': {connections['default'].settings_dict['NAME']!r}}}\n"
        f"DATABASES[{request.target!r}] = {target!r}\n"
        f"METASTORE_CONFIGS = [*METASTORE_CONFIGS, MetastoreConfig(name={config.name!r}, url={config.url!r}, "
        f"warehouse={config.warehouse!r}, allow_outside_roots=True)]\n"
    )
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "kill_settings",
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(settings.BASE_DIR)]),
        "CATALOG_ADMIN_KILL_AT": point,
    }
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(request.as_dict())],
        cwd=settings.BASE_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("point", ["merge.unit_copied", "merge.before_publish_commit"])
@pytest.mark.parametrize("then", ["resume", "revert"])
def test_a_merge_killed_with_sigkill_shows_nothing_and_resumes_or_reverts(
    merge_target, tmp_path: Path, point: str, then: str
) -> None:
    """Killed mid-way: no database, table or partition of the import is visible; resume completes it (the dumps by
    name equal the source's), or revert restores every table of the target."""
    # given
    target = merge_target("3.1.0")
    warehouse = next(c.warehouse_location for c in settings.METASTORE_CONFIGS if c.name == SOURCE)
    into = next(c.warehouse_location for c in settings.METASTORE_CONFIGS if c.name == target)
    rule = parse_location_rule(f"{warehouse}={into}/merged/{SOURCE}")  # the merge copies the data there too
    request = MergeRequest(SOURCE, target, ("marketing", "sales"), RENAMES, (rule,))
    invisible = ("SEQUENCE_TABLE", *COPY_TABLES)
    before, visible_before = metastore_dump(target), metastore_dump(target, skip=invisible)
    # when
    killed = _killed_merge(request, point, tmp_path)
    # then
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    merge = MergeImport.objects.get(target=target)
    assert merge.state == MergeImport.State.COPYING and merge.id_ranges
    assert metastore_dump(target, skip=invisible) == visible_before
    assert unfinished_merges(SOURCE, target) == [merge]
    # when
    if then == "resume":
        merge_resume(merge)
        # then
        assert MergeImport.objects.get(pk=merge.pk).state == MergeImport.State.PUBLISHED
        assert unfinished_merges(SOURCE, target) == []
        for old, new in RENAMES:
            assert database_dump(target, new) == rewritten_dump(SOURCE, old, [[rule.old, rule.new]], dict(RENAMES))
    else:
        merge_revert(merge)
        # then
        assert metastore_dump(target) == before
