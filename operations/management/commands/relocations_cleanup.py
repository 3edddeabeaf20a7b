"""``manage.py relocations_cleanup``: remove relocation sources whose retention time passed, and the copies of
relocations that were reverted (each audited). Run it from cron or a periodic job."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from operations.services.relocate import relocations_cleanup


class Command(BaseCommand):
    help = "Remove relocation sources past their retention time and the copies of reverted relocations."

    def handle(self, *args: Any, **options: Any) -> None:
        for relocation in relocations_cleanup():
            removed = "copy" if relocation.state == relocation.State.REVERTED else "source"
            units = len(relocation.units)
            self.stdout.write(f"Execution #{relocation.execution_id}: removed the {removed} ({units} unit(s)).")
