"""
``Idempotency-Key``: a retried API call with the same key gets the first answer, not a second action.

Decorate a view's handler (``post``, ``patch``) with :func:`idempotent`. Without the header nothing changes. With it,
the handler runs in one transaction together with the key's :class:`~operations.models.IdempotencyKey` row, which
is unique per user, key and endpoint (method and path):

* first use: the handler runs; a successful (2xx) response is stored with a hash of the request body and committed
  with whatever the handler did. A refused call (an error) stores nothing: nothing happened, and the key can be
  used again, with a corrected body if need be;
* the same user, key and endpoint with the same body: the stored response is replayed (same status and body, with
  ``Idempotent-Replayed: true``) and the handler does not run;
* the same user, key and endpoint with another body: 422 ``idempotency_key_reused``;
* a concurrent duplicate waits on the key's row until the first call commits, then gets the replay.

Keys are per user: two users may use the same key independently. A key is remembered for
``CATALOG_IDEMPOTENCY_KEY_TTL`` (24 hours): after that it is a new key, and ``run_jobs`` purges it.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from catalog_admin.errors import ApplicationError, ErrorCode
from operations.models import IdempotencyKey

__all__ = ("HEADER", "IDEMPOTENCY_KEY_PARAMETER", "REPLAYED_HEADER", "idempotent", "request_digest")

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
_MAX_LENGTH = IdempotencyKey._meta.get_field("key").max_length

IDEMPOTENCY_KEY_PARAMETER = OpenApiParameter(
    HEADER,
    {"type": "string", "minLength": 1, "maxLength": _MAX_LENGTH, "pattern": "^[ -~]+$"},  # printable ASCII
    OpenApiParameter.HEADER,
    required=False,
    description=(
        f"Up to {_MAX_LENGTH} printable characters, unique per action (a UUID). A retry with the same key and the "
        f"same body replays the first successful response (header {REPLAYED_HEADER}: true) without acting again; "
        "the same key with another body is refused (422 idempotency_key_reused). Keys are per user and endpoint, "
        f"remembered for {settings.CATALOG_IDEMPOTENCY_KEY_TTL.total_seconds() / 3600:g} hours; a refused call "
        "stores nothing."
    ),
)

Handler = Callable[..., Response]


def idempotent(handler: Handler) -> Handler:
    """Honour the ``Idempotency-Key`` header on a view handler (see the module's docstring)."""

    @functools.wraps(handler)
    def wrapper(view: Any, request: Request, *args: Any, **kwargs: Any) -> Response:
        key = request.headers.get(HEADER)
        if key is None:
            return handler(view, request, *args, **kwargs)
        key = _checked(key)
        scope = f"{request.method} {request.path}"[:255]
        digest = request_digest(request)
        with transaction.atomic():
            earlier = _claim(request.user, key, scope, digest)
            if earlier is not None:
                return _replay(earlier, digest)
            response = handler(view, request, *args, **kwargs)
            _store(request.user, key, scope, response)
        return response

    return wrapper


def request_digest(request: Request) -> str:
    """SHA-256 of the request body as parsed (so key order and whitespace do not matter)."""
    data = request.data
    if hasattr(data, "getlist"):  # a QueryDict (form or multipart body)
        data = {name: data.getlist(name) for name in data}
    payload = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


def _checked(key: str) -> str:
    if not key or len(key) > _MAX_LENGTH or not key.isprintable() or not key.isascii():
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            f"{HEADER} must be 1 to {_MAX_LENGTH} printable ASCII characters.",
            {"parameter": HEADER},
        )
    return key


def _claim(user: Any, key: str, scope: str, digest: str) -> IdempotencyKey | None:
    """Create the key's row (None), or return the row of an earlier use (after that call committed).

    A use older than ``CATALOG_IDEMPOTENCY_KEY_TTL`` is forgotten first: the key counts as new.
    """
    expired = timezone.now() - settings.CATALOG_IDEMPOTENCY_KEY_TTL
    IdempotencyKey.objects.filter(user=user, key=key, scope=scope, created_at__lt=expired).delete()
    try:
        with transaction.atomic():
            IdempotencyKey.objects.create(user=user, key=key, scope=scope, request_hash=digest)
    except IntegrityError:
        return IdempotencyKey.objects.get(user=user, key=key, scope=scope)
    return None


def _replay(earlier: IdempotencyKey, digest: str) -> Response:
    if earlier.request_hash != digest:
        raise ApplicationError(
            ErrorCode.IDEMPOTENCY_KEY_REUSED,
            f"{HEADER} '{earlier.key}' was already used on {earlier.scope} with another body; "
            "use a new key for a new action.",
            {"idempotency_key": earlier.key, "endpoint": earlier.scope},
        )
    if earlier.response_status is None:  # not reachable while calls hold the row until they commit
        raise ApplicationError(
            ErrorCode.INVALID_STATE,
            f"The call with {HEADER} '{earlier.key}' is still running; retry later.",
            {"idempotency_key": earlier.key, "endpoint": earlier.scope},
        )
    return Response(earlier.response_body, status=earlier.response_status, headers={REPLAYED_HEADER: "true"})


def _store(user: Any, key: str, scope: str, response: Response) -> None:
    row = IdempotencyKey.objects.filter(user=user, key=key, scope=scope)
    if not 200 <= response.status_code < 300:
        row.delete()
        return
    body = json.loads(JSONRenderer().render(response.data) or b"null")
    row.update(response_status=response.status_code, response_body=body)
