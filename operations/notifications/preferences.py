"""What each user receives by e-mail: read with the defaults filled in, and set."""

from __future__ import annotations

from collections.abc import Mapping

from django.contrib.auth.models import User

from catalog_admin.errors import ApplicationError, ErrorCode
from operations.models import Audience, NotificationPreference

__all__ = ("notification_choices", "notification_choices_set")


def notification_choices(user: User) -> dict[str, bool]:
    """Each audience and whether ``user`` receives it (everything, until they choose)."""
    preference = NotificationPreference.objects.filter(user=user).first() or NotificationPreference(user=user)
    return {audience: preference.wants(audience) for audience in Audience.values}


def notification_choices_set(user: User, choices: Mapping[str, bool]) -> dict[str, bool]:
    """Keep ``user``'s choices (an audience not named keeps its value); unknown names and values that are not
    booleans are refused naming them, and nothing is written."""
    unknown = sorted(set(choices) - set(Audience.values))
    if unknown:
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            f"Unknown notification choice(s): {', '.join(unknown)}; known: {', '.join(Audience.values)}.",
            {"parameter": unknown[0]},
        )
    not_boolean = sorted(name for name, value in choices.items() if not isinstance(value, bool))
    if not_boolean:
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER, f"'{not_boolean[0]}' must be true or false.", {"parameter": not_boolean[0]}
        )
    NotificationPreference.objects.update_or_create(user=user, defaults=dict(choices))
    return notification_choices(user)
