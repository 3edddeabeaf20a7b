"""
Approvals racing on a SQLite console database, run as its own process by ``test_console_sqlite.py``.

The process uses the production settings (``catalog_admin.settings``) with ``DATABASE_URL`` pointing at a fresh SQLite
file and ``METASTORE_URL`` at a SQLite metastore: it migrates, creates a steward and approvers, has the steward create
and submit requests through the API, then lets the approvers approve them all at the same moment, one thread each
(each with its own connection, as under a threaded server). It prints the answers as JSON on standard output.

Usage: ``python sqlite_console_race.py ROUNDS THREADS`` with ``DATABASE_URL`` and ``METASTORE_URL`` set.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any

os.environ["DJANGO_SETTINGS_MODULE"] = "catalog_admin.settings"
STATEMENT = "ALTER TABLE sales.customers SET TBLPROPERTIES ('round' = '{round}', 'request' = '{n}')"


def main(rounds: int, threads: int) -> dict[str, Any]:
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from operations.models import Approval, AuditRecord
    from operations.services.audit import verify_audit_chain

    call_command("migrate", verbosity=0)
    steward = signed_in(User.objects.create_user("steward", password="x"), Group.objects.get(name="steward"))
    approvers = [
        signed_in(User.objects.create_user(f"approver{n}", password="x"), Group.objects.get(name="approver"))
        for n in range(threads)
    ]
    answers: list[tuple[int, str]] = []
    for round_number in range(rounds):
        pks = [create_submitted(steward, STATEMENT.format(round=round_number, n=n)) for n in range(threads)]
        barrier = threading.Barrier(threads)

        def approve(client: Client, pk: int, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            response = client.post(f"/api/change-requests/{pk}/approve/", {"comment": "ok"}, "application/json")
            answers.append((response.status_code, response.json().get("code", "")))

        workers = [threading.Thread(target=approve, args=pair) for pair in zip(approvers, pks, strict=True)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    connection.close()
    return {
        "database": settings.DATABASES["default"]["ENGINE"],
        "answers": sorted(answers),
        "approvals": Approval.objects.count(),
        "audit_approvals": AuditRecord.objects.filter(action="approve").count(),
        "audit_intact": verify_audit_chain() == [],
    }


def signed_in(user: Any, group: Any) -> Any:
    from django.test import Client

    user.groups.add(group)
    client = Client(raise_request_exception=False)  # a 500 is an answer to count, not an exception
    client.force_login(user)
    return client


def create_submitted(steward: Any, statement: str) -> int:
    created = steward.post("/api/change-requests/", {"statement": statement}, "application/json")
    assert created.status_code == 201, created.content
    pk = created.json()["id"]
    submitted = steward.post(f"/api/change-requests/{pk}/submit/", {}, "application/json")
    assert submitted.status_code == 200, submitted.content
    return pk


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]), int(sys.argv[2]))))
