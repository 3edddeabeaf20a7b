"""``manage.py relocations_cleanup``: remove relocation sources whose retention time passed, and the copies of
relocations that were reverted or whose swap never committed (each audited), under the checks made at delete time;
what it keeps is printed with the reason. Run it from cron or a periodic job."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from operations.services.relocate import relocations_cleanup


class Command(BaseCommand):
    help = "Remove relocation sources past their retention time and the copies of reverted relocations."

    def handle(self, *args: Any, **options: Any) -> None:
        for relocation in relocations_cleanup():
            if relocation.kept:
                first = relocation.kept[0]
                self.stdout.write(
                    f"Execution #{relocation.execution_id}: kept {len(relocation.kept)} unit(s) (first: "
                    f"{first['location']}: {first['reason']}); the next run tries again."
                )
                continue
            removed = "source" if relocation.state == relocation.State.CLEANED else "copy"
            units = len(relocation.units)
            self.stdout.write(f"Execution #{relocation.execution_id}: removed the {removed} ({units} unit(s)).")
