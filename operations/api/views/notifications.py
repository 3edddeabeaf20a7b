"""The caller's notification choices: read and set (what ``/account/notifications/`` shows)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from catalog_admin.errors import ApplicationError, ErrorCode
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
                400,
                401,
                415,
                overrides={400: "invalid_parameter: a body that is not an object, an unknown choice, a non-boolean."},
            ),
        },
    )
    def patch(self, request: Request) -> Response:
        """Change some of the caller's choices (those not named keep their value)."""
        data: Any = request.data
        if not isinstance(data, dict):
            raise ApplicationError(
                ErrorCode.INVALID_PARAMETER, "The body must be a JSON object of choices.", {"parameter": "body"}
            )
        return Response(notification_choices_set(request.user, data))
