"""The caller's notification choices: read and set (what ``/account/notifications/`` shows)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from operations.api.views.base import OperationsAPIView, errors
from operations.models import Audience
from operations.notifications.preferences import notification_choices, notification_choices_set

__all__ = ("NotificationChoicesView",)

_CHOICES = inline_serializer(
    "NotificationChoices", {a.value: serializers.BooleanField(help_text=str(a.label)) for a in Audience}
)


class NotificationChoicesView(OperationsAPIView):
    @extend_schema(
        tags=["account"], operation_id="notification_choices_retrieve", responses={200: _CHOICES, **errors(401)}
    )
    def get(self, request: Request) -> Response:
        """What the caller receives by e-mail, per audience (everything until they choose)."""
        return Response(notification_choices(request.user))

    @extend_schema(
        tags=["account"],
        operation_id="notification_choices_update",
        request=_CHOICES,
        responses={
            200: _CHOICES,
            **errors(
                400, 401, overrides={400: "invalid_parameter: an unknown choice or a value that is not a boolean."}
            ),
        },
    )
    def patch(self, request: Request) -> Response:
        """Change some of the caller's choices (those not named keep their value)."""
        data: Any = request.data
        if not isinstance(data, dict):
            data = {}
        return Response(notification_choices_set(request.user, data))
