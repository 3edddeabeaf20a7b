"""Notifications of change requests' transitions: written to an outbox in the transition's transaction
(:mod:`.outbox`), to the people who can act (:mod:`.recipients`) and the webhooks in scope, and delivered by the
worker with retries (:mod:`.delivery`)."""

from operations.notifications.delivery import deliver_due_notifications
from operations.notifications.outbox import notify_transition

__all__ = ("deliver_due_notifications", "notify_transition")
