"""Who may read ``/metrics`` and ``/health/``'s details without signing in: the metrics token or an allowed network.

``CATALOG_METRICS_TOKEN`` is presented as ``Authorization: Bearer <token>``; ``CATALOG_METRICS_ALLOWED_NETWORKS`` lists
networks (``10.0.0.0/8,127.0.0.1``) whose addresses may scrape without it. Neither set: nobody may.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Sequence
from typing import TYPE_CHECKING

from django.conf import settings

from catalog_admin.errors import ApplicationError, ErrorCode

if TYPE_CHECKING:  # settings.py imports parse_networks: nothing of django.http at import time
    from django.http import HttpRequest

__all__ = ("parse_networks", "scrape_refusal", "token_presented")

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(text: str) -> tuple[Network, ...]:
    """``"10.0.0.0/8, ::1"`` → networks; a wrong entry raises ``ValueError`` naming it (a settings error)."""
    networks = []
    for entry in (part.strip() for part in text.split(",")):
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError as exc:
            raise ValueError(f"CATALOG_METRICS_ALLOWED_NETWORKS: {entry!r} is not a network ({exc})") from exc
    return tuple(networks)


def token_presented(request: HttpRequest) -> bool:
    """The request carries ``Authorization: Bearer <CATALOG_METRICS_TOKEN>`` (compared in constant time)."""
    token: str = settings.CATALOG_METRICS_TOKEN
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    return bool(token) and scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())


def _from_allowed_network(request: HttpRequest, networks: Sequence[Network]) -> bool:
    try:
        address = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    return any(address in network for network in networks)


def scrape_refusal(request: HttpRequest) -> ApplicationError | None:
    """None when the request may scrape; otherwise why not (401 without credentials, 403 with wrong ones)."""
    networks: tuple[Network, ...] = settings.CATALOG_METRICS_ALLOWED_NETWORKS
    if token_presented(request) or _from_allowed_network(request, networks):
        return None
    if not settings.CATALOG_METRICS_TOKEN and not networks:
        return ApplicationError(
            ErrorCode.PERMISSION_DENIED,
            "Metrics are off: set CATALOG_METRICS_TOKEN or CATALOG_METRICS_ALLOWED_NETWORKS.",
        )
    if "Authorization" not in request.headers:
        return ApplicationError(
            ErrorCode.NOT_AUTHENTICATED,
            "Metrics need 'Authorization: Bearer <CATALOG_METRICS_TOKEN>' or an address in "
            "CATALOG_METRICS_ALLOWED_NETWORKS.",
            {"address": request.META.get("REMOTE_ADDR", "")},
        )
    return ApplicationError(ErrorCode.PERMISSION_DENIED, "The metrics token is wrong.")
