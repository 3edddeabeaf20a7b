"""Django admin pages for what administrators configure by hand: chat webhooks, and the notification outbox to see
what was sent, what is retrying and why."""

from __future__ import annotations

from django.contrib import admin

from operations.models import Notification, Webhook

__all__ = ("NotificationAdmin", "WebhookAdmin")


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    list_display = ("name", "metastore", "database_pattern", "audiences", "active")
    list_filter = ("active", "metastore")
    search_fields = ("name", "database_pattern")


@admin.register(Notification)
class NotificationAdmin(admin.ModelAdmin):
    list_display = ("created_at", "channel", "recipient", "outcome", "state", "attempts", "next_attempt_at")
    list_filter = ("state", "channel", "audience")
    search_fields = ("recipient", "subject")
    readonly_fields = [field.name for field in Notification._meta.fields]

    def has_add_permission(self, request: object) -> bool:
        return False
