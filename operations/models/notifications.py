"""The notification outbox (written in the transition's transaction, delivered by the worker), each user's choice
of what they receive, and the chat webhooks."""

from __future__ import annotations

from django.conf import settings
from django.db import models

__all__ = ("Audience", "Notification", "NotificationPreference", "Webhook")


class Audience(models.TextChoices):
    """Why somebody hears of a transition: the categories a user or a webhook chooses from."""

    AWAITING_APPROVAL = "awaiting_approval", "Requests waiting for my approval"
    DECISIONS = "decisions", "Decisions on my requests (approved, rejected, cancelled)"
    OUTCOMES = "outcomes", "Outcomes of my requests (succeeded, failed)"
    FAILED_JOBS = "failed_jobs", "Failed executions (operators)"


class Notification(models.Model):
    """One message to one recipient (an e-mail address or a webhook), sent by the worker with retries."""

    class Channel(models.TextChoices):
        EMAIL = "email", "E-mail"
        WEBHOOK = "webhook", "Webhook"

    class State(models.TextChoices):
        PENDING = "pending", "Pending"
        SENT = "sent", "Sent"
        FAILED = "failed", "Failed (no more attempts)"

    request = models.ForeignKey(
        "operations.ChangeRequest", on_delete=models.CASCADE, related_name="notifications", null=True, blank=True
    )
    audience = models.CharField(max_length=24, choices=Audience.choices)
    outcome = models.CharField(max_length=32, help_text="The transition it tells of (submitted, approved, …).")
    channel = models.CharField(max_length=8, choices=Channel.choices)
    recipient = models.CharField(max_length=254, help_text="An e-mail address, or the webhook's name.")
    webhook = models.ForeignKey("operations.Webhook", null=True, blank=True, on_delete=models.CASCADE)
    subject = models.CharField(max_length=255)
    body = models.TextField()
    state = models.CharField(max_length=8, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField()
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["state", "next_attempt_at"], name="notification_due")]

    def __str__(self) -> str:
        return f"{self.channel} to {self.recipient}: {self.subject}"


class NotificationPreference(models.Model):
    """What one user receives by e-mail (no row: everything their roles make them an audience of)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_preference"
    )
    awaiting_approval = models.BooleanField(default=True)
    decisions = models.BooleanField(default=True)
    outcomes = models.BooleanField(default=True)
    failed_jobs = models.BooleanField(default=True)

    def __str__(self) -> str:
        return f"notification choices of user {self.user_id}"

    def wants(self, audience: str) -> bool:
        return bool(getattr(self, audience))


class Webhook(models.Model):
    """A chat channel (Slack-compatible JSON ``{"text": …}``) told of the transitions in its scope."""

    name = models.SlugField(max_length=64, unique=True)
    url = models.URLField(max_length=500, help_text="The incoming-webhook address (a secret: shown to admins only).")
    metastore = models.CharField(max_length=64, blank=True, help_text="Only this metastore's requests (empty: all).")
    database_pattern = models.CharField(
        max_length=128, blank=True, help_text="Only requests touching a matching database, e.g. sales_* (empty: all)."
    )
    audiences = models.JSONField(
        default=list, blank=True, help_text=f"Any of {', '.join(Audience.values)} (empty: every transition)."
    )
    active = models.BooleanField(default=True)

    def __str__(self) -> str:
        return self.name
