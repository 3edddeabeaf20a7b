"""Notifications leave through a real SMTP server (aiosmtpd on loopback) and a real HTTP webhook receiver, sent by
the worker's chore from the outbox the transitions write; each reaches the people who can act on it."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from datetime import timedelta
from email import message_from_bytes
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from django.contrib.auth.models import Group, User
from django.utils import timezone

from catalog_admin.errors import ApplicationError
from catalog_admin.mail_config import email_settings
from catalog_admin.selectors.metastores import Metastore
from operations.ddl.parser import parse_alter
from operations.housekeeping import CHORES
from operations.models import ChangeRequest, Notification, NotificationPreference, Webhook
from operations.notifications import deliver_due_notifications
from operations.notifications.preferences import notification_choices_set
from operations.services.change_requests import (
    change_request_approve,
    change_request_create,
    change_request_reject,
    change_request_submit,
)

pytestmark = pytest.mark.django_db


class Inbox:
    """An aiosmtpd handler keeping each message it receives with its envelope recipients."""

    def __init__(self) -> None:
        self.received: list[tuple[list[str], Message]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 (aiosmtpd's name)
        self.received.append((list(envelope.rcpt_tos), message_from_bytes(envelope.content)))
        return "250 OK"

    def to(self, address: str) -> list[Message]:
        return [message for recipients, message in self.received if address in recipients]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def smtp(settings: Any) -> Iterator[Inbox]:
    """A real SMTP server on a free loopback port, and the settings the environment's EMAIL_URL gives for it."""
    port = free_port()
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    for name, value in email_settings({"EMAIL_URL": f"smtp://127.0.0.1:{port}"}).items():
        setattr(settings, name, value)
    yield inbox
    controller.stop()


class Receiver(BaseHTTPRequestHandler):
    """A chat service's incoming webhook: keeps each JSON body; answers the status the test sets."""

    bodies: list[dict[str, Any]]
    status: list[int]

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        length = int(self.headers["Content-Length"])
        self.bodies.append(json.loads(self.rfile.read(length)))
        self.send_response(self.status[0])
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[dict[str, Any]], list[int]]]:
    """A webhook receiver on loopback: its URL, the bodies it received, and the status it answers (settable)."""
    bodies: list[dict[str, Any]] = []
    status = [200]
    handler = type("Handler", (Receiver,), {"bodies": bodies, "status": status})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hooks/catalog", bodies, status
    server.shutdown()


def submitted(metastore: Metastore, people: dict[str, User], statement: str, reason: str = "tidy") -> ChangeRequest:
    spec = parse_alter(statement)
    request = change_request_create(user=people["steward"], metastore=metastore.name, spec=spec, reason=reason)
    return change_request_submit(request=request, user=people["steward"])


def test_a_submitted_request_is_queued_in_its_transaction_and_the_worker_mails_the_approvers(
    metastore: Metastore, people: dict[str, User], smtp: Inbox
) -> None:
    # when: a steward submits
    request = submitted(metastore, people, "ALTER TABLE sales.customers RENAME TO sales.clients")

    # then: nothing left while the request was answered; the outbox holds one message per approver, not the requester
    assert smtp.received == []
    queued = Notification.objects.filter(request=request)
    assert sorted(queued.values_list("recipient", flat=True)) == [
        "admin@example.com", "approver2@example.com", "approver@example.com",
    ]  # fmt: skip

    # when: the worker's chore runs
    report = deliver_due_notifications()

    # then
    assert report.sent == 3
    message = smtp.to(people["approver"].email)[0]
    assert f"#{request.pk} submitted" in message["Subject"]
    assert "RENAME TO `sales`.`clients`" in message.get_payload()
    assert "Reason: tidy" in message.get_payload()
    assert "Risk: high" in message.get_payload()
    assert f"/changes/{request.pk}/" in message.get_payload()
    assert smtp.to(people["steward"].email) == []
    assert set(queued.values_list("state", flat=True)) == {"sent"}


def test_approvers_hear_only_of_changes_their_scope_covers(
    metastore: Metastore, people: dict[str, User], smtp: Inbox, settings: Any
) -> None:
    # given: approver2 decides on the hr_* databases only
    settings.CATALOG_APPROVER_SCOPES = {"hr-approvers": ["hr_*"]}
    people["approver2"].groups.add(Group.objects.get_or_create(name="hr-approvers")[0])

    # when
    submitted(metastore, people, "ALTER TABLE sales.customers SET TBLPROPERTIES ('owner.team'='crm')")
    deliver_due_notifications()

    # then
    assert smtp.to(people["approver"].email) != []
    assert smtp.to(people["approver2"].email) == []


def test_the_requester_hears_of_the_decision_and_approvers_who_decided_hear_no_more(
    metastore: Metastore, people: dict[str, User], smtp: Inbox
) -> None:
    # given: a rename needs two approvals
    request = submitted(metastore, people, "ALTER TABLE sales.customers RENAME TO sales.clients")
    deliver_due_notifications()
    smtp.received.clear()

    # when: one approves, then another rejects
    change_request_approve(request=request, user=people["approver"], comment="ok")
    deliver_due_notifications()
    after_first = list(smtp.received)
    change_request_reject(request=request, user=people["approver2"], comment="not now")
    deliver_due_notifications()

    # then: the first approval told those still to decide (not the approver who did, not the requester)
    told = {address for recipients, _ in after_first for address in recipients}
    assert told == {"approver2@example.com", "admin@example.com"}
    rejected = smtp.to(people["steward"].email)
    assert len(rejected) == 1 and f"#{request.pk} rejected" in rejected[0]["Subject"]
    assert "by approver2" in rejected[0].get_payload()


def test_a_user_who_chose_not_to_receive_approval_requests_gets_none(
    metastore: Metastore, people: dict[str, User], smtp: Inbox
) -> None:
    notification_choices_set(people["approver"], {"awaiting_approval": False})

    submitted(metastore, people, "ALTER TABLE sales.customers SET TBLPROPERTIES ('owner.team'='crm')")
    deliver_due_notifications()

    assert smtp.to(people["approver"].email) == []
    assert smtp.to(people["approver2"].email) != []


@pytest.mark.parametrize(
    ("choices", "named"), [({"everything": True}, "everything"), ({"decisions": "yes"}, "decisions")]
)
def test_bad_notification_choices_are_refused_naming_them(
    people: dict[str, User], choices: dict[str, Any], named: str
) -> None:
    with pytest.raises(ApplicationError, match=named) as refused:
        notification_choices_set(people["approver"], choices)

    assert refused.value.code == "invalid_parameter"
    assert not NotificationPreference.objects.exists()


def test_a_mail_server_that_is_down_is_retried_later_and_the_transition_still_happened(
    metastore: Metastore, people: dict[str, User], settings: Any
) -> None:
    # given: e-mail aimed at a loopback port nobody listens on
    for name, value in email_settings({"EMAIL_URL": f"smtp://127.0.0.1:{free_port()}"}).items():
        setattr(settings, name, value)
    request = submitted(metastore, people, "ALTER TABLE sales.customers SET TBLPROPERTIES ('owner.team'='crm')")
    assert request.state == "submitted"

    # when
    report = deliver_due_notifications()

    # then: kept for a later attempt, the error said, not due again for 30 s
    assert (report.sent, report.retrying) == (0, 3)
    waiting = Notification.objects.filter(request=request).first()
    assert waiting is not None and waiting.state == "pending" and waiting.attempts == 1
    assert "refused" in waiting.last_error.lower()
    assert waiting.next_attempt_at > timezone.now() + timedelta(seconds=25)
    assert deliver_due_notifications().retrying == 0  # not due yet


def test_after_the_last_attempt_a_notification_is_kept_as_failed(
    metastore: Metastore, people: dict[str, User], settings: Any
) -> None:
    for name, value in email_settings({"EMAIL_URL": f"smtp://127.0.0.1:{free_port()}"}).items():
        setattr(settings, name, value)
    settings.CATALOG_NOTIFICATION_MAX_ATTEMPTS = 2
    submitted(metastore, people, "ALTER TABLE sales.customers SET TBLPROPERTIES ('owner.team'='crm')")

    deliver_due_notifications()
    report = deliver_due_notifications(now=timezone.now() + timedelta(hours=2))

    assert report.given_up == 3
    assert set(Notification.objects.values_list("state", flat=True)) == {"failed"}


def test_a_webhook_in_scope_receives_slack_compatible_json_and_one_out_of_scope_nothing(
    metastore: Metastore, people: dict[str, User], receiver: tuple[str, list[dict[str, Any]], list[int]], settings: Any
) -> None:
    # given: no e-mail; a webhook for the sales databases and one for hr
    settings.CATALOG_EMAIL_ENABLED = False
    url, bodies, _status = receiver
    Webhook.objects.create(name="sales-team", url=url, database_pattern="sales*")
    Webhook.objects.create(name="hr-team", url=url + "/hr", database_pattern="hr*")

    # when
    request = submitted(metastore, people, "ALTER TABLE sales.customers SET TBLPROPERTIES ('owner.team'='crm')")
    report = deliver_due_notifications()

    # then
    assert report.sent == 1
    assert len(bodies) == 1
    text = bodies[0]["text"]
    assert f"#{request.pk}> submitted" in text and "`sales.customers`" in text
    assert "owner.team" in text


def test_a_webhook_that_answers_an_error_is_retried(
    metastore: Metastore, people: dict[str, User], receiver: tuple[str, list[dict[str, Any]], list[int]], settings: Any
) -> None:
    settings.CATALOG_EMAIL_ENABLED = False
    url, bodies, status = receiver
    status[0] = 503
    Webhook.objects.create(name="ops", url=url)
    submitted(metastore, people, "ALTER TABLE sales.customers SET TBLPROPERTIES ('owner.team'='crm')")

    first = deliver_due_notifications()
    status[0] = 200
    second = deliver_due_notifications(now=timezone.now() + timedelta(minutes=1))

    assert (first.retrying, second.sent) == (1, 1)
    assert len(bodies) == 2
    assert "HTTP 503" not in Notification.objects.get().last_error  # cleared once sent


def test_the_worker_sends_the_outbox_as_a_housekeeping_chore(
    metastore: Metastore, people: dict[str, User], smtp: Inbox
) -> None:
    submitted(metastore, people, "ALTER TABLE sales.customers SET TBLPROPERTIES ('owner.team'='crm')")
    chore = next(c for c in CHORES if c.name == "notifications")

    lines = chore.run()

    assert lines == ["Notifications: 3 sent, 0 to retry, 0 given up."]
    assert len(smtp.received) == 3


def test_a_transition_that_rolls_back_queues_nothing(
    metastore: Metastore, people: dict[str, User], smtp: Inbox
) -> None:
    # given: the second approval of the same approver is refused inside the approval's transaction
    request = submitted(metastore, people, "ALTER TABLE sales.customers RENAME TO sales.clients")
    change_request_approve(request=request, user=people["approver"], comment="ok")
    before = Notification.objects.count()

    with pytest.raises(Exception, match="already decided"):
        change_request_approve(request=request, user=people["approver"], comment="again")

    assert Notification.objects.count() == before


def test_operators_hear_of_failures_only() -> None:
    from operations.notifications.recipients import audiences_of

    assert audiences_of("failed") == ("outcomes", "failed_jobs")
    assert audiences_of("succeeded") == ("outcomes",)
    assert audiences_of("commented") == ()
