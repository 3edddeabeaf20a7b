"""The signed-in user's notification choices (``/account/notifications/``)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from operations.models import Audience
from operations.notifications.preferences import notification_choices, notification_choices_set

__all__ = ("account_notifications",)


class NotificationChoicesForm(forms.Form):
    """One checkbox per audience."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for audience in Audience:
            self.fields[audience.value] = forms.BooleanField(label=audience.label, required=False)


@require_http_methods(["GET", "POST"])
def account_notifications(request: HttpRequest) -> HttpResponse:
    user = request.user
    assert user.is_authenticated, "the sign-in middleware lets only signed-in users here"
    if request.method == "POST":
        form = NotificationChoicesForm(request.POST)
        if form.is_valid():
            notification_choices_set(user, form.cleaned_data)
            messages.success(request, "Your notification choices are saved.")
            return redirect("account-notifications")
    else:
        form = NotificationChoicesForm(initial=notification_choices(user))
    context = {
        "form": form,
        "email_enabled": getattr(settings, "CATALOG_EMAIL_ENABLED", False),
        "email": getattr(user, "email", ""),
    }
    return render(request, "operations/account_notifications.html", context)
