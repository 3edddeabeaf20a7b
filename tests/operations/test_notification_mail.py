"""Notification e-mails reach a real SMTP server (aiosmtpd on loopback) through the settings EMAIL_URL gives."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from email import message_from_bytes
from email.message import Message
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from django.contrib.auth.models import User

from catalog_admin.mail_config import email_settings
from catalog_admin.selectors.metastores import Metastore
from operations.ddl.parser import parse_alter
from operations.services.change_requests import change_request_create, change_request_submit

pytestmark = pytest.mark.django_db


class Inbox:
    """An aiosmtpd handler keeping each message it receives with its envelope recipients."""

    def __init__(self) -> None:
        self.received: list[tuple[list[str], Message]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 (aiosmtpd's name)
        self.received.append((list(envelope.rcpt_tos), message_from_bytes(envelope.content)))
        return "250 OK"


@pytest.fixture
def smtp_server() -> Iterator[tuple[int, Inbox]]:
    """A real SMTP server on a free loopback port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    yield port, inbox
    controller.stop()


def test_a_submitted_request_is_mailed_through_the_smtp_server_email_url_names(
    metastore: Metastore, people: dict[str, User], settings, smtp_server, django_capture_on_commit_callbacks
) -> None:
    # given: the settings the environment's EMAIL_URL gives, aimed at the server
    port, inbox = smtp_server
    for name, value in email_settings({"EMAIL_URL": f"smtp://127.0.0.1:{port}"}).items():
        setattr(settings, name, value)
    spec = parse_alter("ALTER TABLE sales.customers RENAME TO sales.clients")
    request = change_request_create(user=people["steward"], metastore=metastore.name, spec=spec, reason="tidy")

    # when
    with django_capture_on_commit_callbacks(execute=True):
        change_request_submit(request=request, user=people["steward"])

    # then
    assert len(inbox.received) == 1
    recipients, message = inbox.received[0]
    assert people["approver"].email in recipients
    assert f"#{request.pk} submitted" in message["Subject"]
    assert "RENAME TO `sales`.`clients`" in message.get_payload()
    assert "Risk: high" in message.get_payload()
