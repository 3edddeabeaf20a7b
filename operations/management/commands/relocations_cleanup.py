"""``manage.py relocations_cleanup``: remove relocation sources whose retention time passed, and the copies of
relocations that were reverted or whose swap never committed (each audited), under the checks made at delete time;
what it keeps is printed with the reason. The worker runs it on schedule too
(``CATALOG_HOUSEKEEPING_RELOCATIONS_CLEANUP_SECONDS``, ``operations/housekeeping.py``)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from operations.housekeeping import describe_cleanup
from operations.services.relocate import relocations_cleanup


class Command(BaseCommand):
    help = "Remove relocation sources past their retention time and the copies of reverted relocations."

    def handle(self, *args: Any, **options: Any) -> None:
        for relocation in relocations_cleanup():
            self.stdout.write(describe_cleanup(relocation))
