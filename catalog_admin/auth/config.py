"""
Sign-in configuration from the environment: local accounts, LDAP/Active Directory, OpenID Connect, directory groups
-> roles and scopes.

``sign_in_settings(env)`` returns the Django settings (``AUTHENTICATION_BACKENDS``, ``AUTH_LDAP_*``, ``OIDC_*``, the
group maps)
that ``catalog_admin.settings`` adopts; a malformed variable raises ``SignInConfigError`` naming it, and the console
does not start.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import ldap
from django_auth_ldap.config import (
    ActiveDirectoryGroupType,
    GroupOfNamesType,
    GroupOfUniqueNamesType,
    LDAPGroupType,
    LDAPSearch,
    NestedActiveDirectoryGroupType,
    PosixGroupType,
)

from catalog_admin.roles import Role

__all__ = (
    "LDAP_BACKEND",
    "LOCAL_BACKEND",
    "LOCKOUT_BACKEND",
    "OIDC_BACKEND",
    "SignInConfigError",
    "parse_group_map",
    "sign_in_settings",
)

LOCAL_BACKEND = "django.contrib.auth.backends.ModelBackend"
LDAP_BACKEND = "catalog_admin.auth.directory.DirectoryBackend"
OIDC_BACKEND = "catalog_admin.auth.oidc.CompanySignInBackend"
# CATALOG_OIDC_* -> mozilla-django-oidc's settings: the provider's endpoints and the console's client registration.
OIDC_REQUIRED = {
    "CATALOG_OIDC_CLIENT_SECRET": "OIDC_RP_CLIENT_SECRET",
    "CATALOG_OIDC_AUTHORIZATION_ENDPOINT": "OIDC_OP_AUTHORIZATION_ENDPOINT",
    "CATALOG_OIDC_TOKEN_ENDPOINT": "OIDC_OP_TOKEN_ENDPOINT",
    "CATALOG_OIDC_USERINFO_ENDPOINT": "OIDC_OP_USER_ENDPOINT",
}
LOCKOUT_BACKEND = "axes.backends.AxesStandaloneBackend"  # refuses a locked-out sign-in before the others are asked

# CATALOG_LDAP_GROUP_TYPE -> how the directory's groups name their members.
GROUP_TYPES: dict[str, type[LDAPGroupType]] = {
    "groupOfNames": GroupOfNamesType,
    "groupOfUniqueNames": GroupOfUniqueNamesType,
    "posixGroup": PosixGroupType,
    "activeDirectory": ActiveDirectoryGroupType,
    "nestedActiveDirectory": NestedActiveDirectoryGroupType,
}


class SignInConfigError(ValueError):
    """A sign-in variable of the environment is malformed."""


def sign_in_settings(env: Mapping[str, str]) -> dict[str, Any]:
    """The sign-in settings the environment asks for: local accounts (``CATALOG_LOCAL_ACCOUNTS``), a directory
    (``CATALOG_LDAP_URL``) and OpenID Connect (``CATALOG_OIDC_CLIENT_ID``), any of them together."""
    local = _flag(env, "CATALOG_LOCAL_ACCOUNTS", default=True)
    scopes = _approver_scopes(env)
    url = env.get("CATALOG_LDAP_URL", "").strip()
    client_id = env.get("CATALOG_OIDC_CLIENT_ID", "").strip()
    result: dict[str, Any] = {
        "CATALOG_APPROVER_SCOPES": scopes,
        "CATALOG_LOCAL_ACCOUNTS": local,
        "CATALOG_PASSWORD_SIGN_IN": bool(local or url),
        "CATALOG_OIDC_ENABLED": bool(client_id),
    }
    backends = [LDAP_BACKEND] if url else []
    if client_id:
        backends.append(OIDC_BACKEND)
    if local:
        backends.append(LOCAL_BACKEND)
    if not backends:
        raise SignInConfigError(
            "CATALOG_LOCAL_ACCOUNTS=false needs CATALOG_LDAP_URL or CATALOG_OIDC_CLIENT_ID: nobody could sign in."
        )
    result["AUTHENTICATION_BACKENDS"] = [LOCKOUT_BACKEND, *backends]
    result.update(_lockout_settings(env))
    if url:
        result.update(_ldap_settings(env, url))
    if client_id:
        result.update(_oidc_settings(env, client_id))
    if url or client_id:
        result["CATALOG_ROLE_GROUPS"] = parse_group_map(env, "CATALOG_ROLE_GROUPS", [str(role) for role in Role])
        result["CATALOG_APPROVER_SCOPE_GROUPS"] = parse_group_map(env, "CATALOG_APPROVER_SCOPE_GROUPS", list(scopes))
    return result


def parse_group_map(env: Mapping[str, str], name: str, allowed: list[str]) -> dict[str, list[str]]:
    """``key=group;key=group…`` as {key: [groups, lower-cased]}: a group is a directory group's DN (LDAP) or a group
    name of the OpenID Connect provider's groups claim; a key may repeat; keys must be ``allowed``."""
    result: dict[str, list[str]] = {}
    for item in (part.strip() for part in env.get(name, "").split(";")):
        if not item:
            continue
        key, sep, dn = (text.strip() for text in item.partition("="))
        if not sep or not key or not dn:
            raise SignInConfigError(f"{name} entry '{item}' is not of the form name=<group DN or name>.")
        if key not in allowed:
            raise SignInConfigError(f"{name} names '{key}', which is not one of: {', '.join(allowed) or 'none'}.")
        result.setdefault(key, []).append(dn.lower())
    return result


def _ldap_settings(env: Mapping[str, str], url: str) -> dict[str, Any]:
    """django-auth-ldap's ``AUTH_LDAP_*`` settings."""
    user_base = _required(env, "CATALOG_LDAP_USER_SEARCH_BASE")
    user_filter = env.get("CATALOG_LDAP_USER_FILTER", "(uid=%(user)s)")
    if "%(user)s" not in user_filter:
        raise SignInConfigError(f"CATALOG_LDAP_USER_FILTER '{user_filter}' must contain %(user)s.")
    group_type_name = env.get("CATALOG_LDAP_GROUP_TYPE", "groupOfNames")
    if group_type_name not in GROUP_TYPES:
        raise SignInConfigError(f"CATALOG_LDAP_GROUP_TYPE '{group_type_name}' is not one of: {', '.join(GROUP_TYPES)}.")
    group_base = env.get("CATALOG_LDAP_GROUP_SEARCH_BASE", "").strip() or user_base
    return {
        "AUTH_LDAP_SERVER_URI": url,
        "AUTH_LDAP_BIND_DN": env.get("CATALOG_LDAP_BIND_DN", ""),
        "AUTH_LDAP_BIND_PASSWORD": env.get("CATALOG_LDAP_BIND_PASSWORD", ""),
        "AUTH_LDAP_START_TLS": _flag(env, "CATALOG_LDAP_START_TLS", default=False),
        "AUTH_LDAP_USER_SEARCH": LDAPSearch(user_base, ldap.SCOPE_SUBTREE, user_filter),
        "AUTH_LDAP_GROUP_SEARCH": LDAPSearch(group_base, ldap.SCOPE_SUBTREE, "(objectClass=*)"),
        "AUTH_LDAP_GROUP_TYPE": GROUP_TYPES[group_type_name](),
        "AUTH_LDAP_USER_ATTR_MAP": {"first_name": "givenName", "last_name": "sn", "email": "mail"},
        "AUTH_LDAP_ALWAYS_UPDATE_USER": True,
        "AUTH_LDAP_CONNECTION_OPTIONS": {ldap.OPT_NETWORK_TIMEOUT: 10, ldap.OPT_TIMEOUT: 10},
    }


def _oidc_settings(env: Mapping[str, str], client_id: str) -> dict[str, Any]:
    """mozilla-django-oidc's ``OIDC_*`` settings (the authorization code flow, with a nonce and PKCE)."""
    missing = [name for name in OIDC_REQUIRED if not env.get(name, "").strip()]
    if missing:
        raise SignInConfigError(f"{', '.join(missing)} must be set when CATALOG_OIDC_CLIENT_ID is.")
    algorithm = env.get("CATALOG_OIDC_SIGN_ALGO", "RS256").strip()
    if algorithm not in ("RS256", "ES256", "HS256"):
        raise SignInConfigError(f"CATALOG_OIDC_SIGN_ALGO '{algorithm}' is not one of: RS256, ES256, HS256.")
    jwks = env.get("CATALOG_OIDC_JWKS_ENDPOINT", "").strip()
    if algorithm != "HS256" and not jwks:
        raise SignInConfigError(f"CATALOG_OIDC_JWKS_ENDPOINT must be set for CATALOG_OIDC_SIGN_ALGO {algorithm}.")
    for name in (*OIDC_REQUIRED, "CATALOG_OIDC_JWKS_ENDPOINT"):
        value = env.get(name, "").strip()
        if value and name.endswith("ENDPOINT") and not value.startswith(("https://", "http://")):
            raise SignInConfigError(f"{name} '{value}' is not an http(s) URL.")
    return {
        "OIDC_RP_CLIENT_ID": client_id,
        **{setting: env[name].strip() for name, setting in OIDC_REQUIRED.items()},
        "OIDC_OP_JWKS_ENDPOINT": jwks,
        "OIDC_RP_SIGN_ALGO": algorithm,
        "OIDC_RP_SCOPES": env.get("CATALOG_OIDC_SCOPES", "openid email profile groups").strip(),
        "OIDC_USE_PKCE": True,
        "OIDC_CREATE_USER": True,
        "LOGIN_REDIRECT_URL_FAILURE": "/accounts/login/?sso=failed",
        "CATALOG_OIDC_NAME": env.get("CATALOG_OIDC_NAME", "your company account").strip(),
        "CATALOG_OIDC_USERNAME_CLAIM": env.get("CATALOG_OIDC_USERNAME_CLAIM", "preferred_username").strip(),
        "CATALOG_OIDC_GROUPS_CLAIM": env.get("CATALOG_OIDC_GROUPS_CLAIM", "groups").strip(),
    }


def _lockout_settings(env: Mapping[str, str]) -> dict[str, Any]:
    """django-axes: after ``CATALOG_LOGIN_FAILURE_LIMIT`` failed sign-ins of one user name from one address, that pair
    is locked out for ``CATALOG_LOGIN_LOCKOUT_MINUTES``; a successful sign-in resets the count."""
    limit, minutes = (
        _positive(env, "CATALOG_LOGIN_FAILURE_LIMIT", 5),
        _positive(env, "CATALOG_LOGIN_LOCKOUT_MINUTES", 15),
    )
    return {
        "AXES_ENABLED": _flag(env, "CATALOG_LOGIN_THROTTLING", default=True),
        "AXES_FAILURE_LIMIT": limit,
        "AXES_COOLOFF_TIME": timedelta(minutes=minutes),
        "AXES_LOCKOUT_PARAMETERS": [["username", "ip_address"]],
        "AXES_RESET_ON_SUCCESS": True,
    }


def _approver_scopes(env: Mapping[str, str]) -> dict[str, list[str]]:
    """``CATALOG_APPROVER_SCOPES``: a JSON object {scope group: [database patterns]}."""
    raw = env.get("CATALOG_APPROVER_SCOPES", "").strip()
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise SignInConfigError(f"CATALOG_APPROVER_SCOPES is not valid JSON: {exc}.") from exc
    if not isinstance(value, dict) or not all(
        isinstance(patterns, list) and all(isinstance(p, str) for p in patterns) for patterns in value.values()
    ):
        raise SignInConfigError('CATALOG_APPROVER_SCOPES must be {"group": ["database pattern", …], …}.')
    return value


def _required(env: Mapping[str, str], name: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise SignInConfigError(f"{name} must be set when CATALOG_LDAP_URL is.")
    return value


def _positive(env: Mapping[str, str], name: str, default: int) -> int:
    value = env.get(name, "").strip() or str(default)
    if not value.isdigit() or int(value) < 1:
        raise SignInConfigError(f"{name} '{value}' is not a positive whole number.")
    return int(value)


def _flag(env: Mapping[str, str], name: str, *, default: bool) -> bool:
    value = env.get(name, "").strip().lower()
    if not value:
        return default
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise SignInConfigError(f"{name} '{value}' is neither true nor false.")
