"""Sign-in settings from the environment (catalog_admin/auth/config.py): what a site sets, what it is refused."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from catalog_admin.auth.config import (
    LDAP_BACKEND,
    LOCAL_BACKEND,
    LOCKOUT_BACKEND,
    OIDC_BACKEND,
    SignInConfigError,
    sign_in_settings,
)

REPO_ROOT = Path(__file__).resolve().parents[3]
PRODUCTION_ENV = {
    "DJANGO_SETTINGS_MODULE": "catalog_admin.settings_production",
    "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
    "DJANGO_ALLOWED_HOSTS": "console.example.com",
    "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/catalog_admin",
}
OIDC = {
    "CATALOG_OIDC_CLIENT_ID": "catalog-admin",
    "CATALOG_OIDC_CLIENT_SECRET": "s3cret",
    "CATALOG_OIDC_AUTHORIZATION_ENDPOINT": "https://sso.example.org/auth",
    "CATALOG_OIDC_TOKEN_ENDPOINT": "https://sso.example.org/token",
    "CATALOG_OIDC_USERINFO_ENDPOINT": "https://sso.example.org/userinfo",
    "CATALOG_OIDC_JWKS_ENDPOINT": "https://sso.example.org/jwks",
}
LDAP = {"CATALOG_LDAP_URL": "ldap://ldap.example.org", "CATALOG_LDAP_USER_SEARCH_BASE": "ou=people,dc=example,dc=org"}


def test_local_accounts_only_by_default() -> None:
    result = sign_in_settings({})
    assert result["AUTHENTICATION_BACKENDS"] == [LOCKOUT_BACKEND, LOCAL_BACKEND]
    assert "AUTH_LDAP_SERVER_URI" not in result


def test_directory_and_groups() -> None:
    env = {
        **LDAP,
        "CATALOG_LOCAL_ACCOUNTS": "false",
        "CATALOG_ROLE_GROUPS": "approver=CN=Hive-Approvers,ou=groups,dc=example,dc=org; approver=cn=dba,dc=example",
        "CATALOG_APPROVER_SCOPES": '{"marketing": ["marketing", "mkt_*"]}',
        "CATALOG_APPROVER_SCOPE_GROUPS": "marketing=cn=mkt,ou=groups,dc=example,dc=org",
    }
    result = sign_in_settings(env)
    assert result["AUTHENTICATION_BACKENDS"] == [LOCKOUT_BACKEND, LDAP_BACKEND]
    assert result["CATALOG_ROLE_GROUPS"] == {
        "approver": ["cn=hive-approvers,ou=groups,dc=example,dc=org", "cn=dba,dc=example"]
    }
    assert result["CATALOG_APPROVER_SCOPES"] == {"marketing": ["marketing", "mkt_*"]}
    assert result["CATALOG_APPROVER_SCOPE_GROUPS"] == {"marketing": ["cn=mkt,ou=groups,dc=example,dc=org"]}
    assert result["AUTH_LDAP_USER_SEARCH"].base_dn == "ou=people,dc=example,dc=org"


def test_openid_connect_with_group_names() -> None:
    env = {
        **OIDC,
        "CATALOG_LOCAL_ACCOUNTS": "false",
        "CATALOG_ROLE_GROUPS": "approver=Hive-Approvers;steward=cn=s,dc=x",
    }

    result = sign_in_settings(env)

    assert result["AUTHENTICATION_BACKENDS"] == [LOCKOUT_BACKEND, OIDC_BACKEND]
    assert (result["CATALOG_OIDC_ENABLED"], result["CATALOG_PASSWORD_SIGN_IN"]) == (True, False)
    assert result["OIDC_OP_TOKEN_ENDPOINT"] == "https://sso.example.org/token"
    assert (result["OIDC_RP_SIGN_ALGO"], result["OIDC_USE_PKCE"]) == ("RS256", True)
    assert result["CATALOG_ROLE_GROUPS"] == {"approver": ["hive-approvers"], "steward": ["cn=s,dc=x"]}


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"CATALOG_LOCAL_ACCOUNTS": "false"}, "CATALOG_LOCAL_ACCOUNTS=false needs CATALOG_LDAP_URL"),
        (
            {k: v for k, v in OIDC.items() if k != "CATALOG_OIDC_TOKEN_ENDPOINT"},
            "CATALOG_OIDC_TOKEN_ENDPOINT must be set when CATALOG_OIDC_CLIENT_ID is",
        ),
        (
            {**OIDC, "CATALOG_OIDC_JWKS_ENDPOINT": ""},
            "CATALOG_OIDC_JWKS_ENDPOINT must be set for CATALOG_OIDC_SIGN_ALGO",
        ),
        ({**OIDC, "CATALOG_OIDC_SIGN_ALGO": "none"}, "CATALOG_OIDC_SIGN_ALGO 'none' is not one of"),
        (
            {**OIDC, "CATALOG_OIDC_TOKEN_ENDPOINT": "sso/token"},
            "CATALOG_OIDC_TOKEN_ENDPOINT 'sso/token' is not an http",
        ),
        ({"CATALOG_LOCAL_ACCOUNTS": "nope"}, "CATALOG_LOCAL_ACCOUNTS 'nope' is neither true nor false"),
        ({"CATALOG_LDAP_URL": "ldap://x"}, "CATALOG_LDAP_USER_SEARCH_BASE must be set"),
        ({**LDAP, "CATALOG_ROLE_GROUPS": "owner=cn=x,dc=y"}, "CATALOG_ROLE_GROUPS names 'owner', which is not one of"),
        ({**LDAP, "CATALOG_ROLE_GROUPS": "approver"}, "CATALOG_ROLE_GROUPS entry 'approver' is not of the form"),
        ({**LDAP, "CATALOG_APPROVER_SCOPE_GROUPS": "mkt=cn=x,dc=y"}, "names 'mkt', which is not one of: none"),
        ({**LDAP, "CATALOG_LDAP_GROUP_TYPE": "nis"}, "CATALOG_LDAP_GROUP_TYPE 'nis' is not one of"),
        ({**LDAP, "CATALOG_LDAP_USER_FILTER": "(uid=x)"}, "must contain %(user)s"),
        ({"CATALOG_APPROVER_SCOPES": "[1]"}, "CATALOG_APPROVER_SCOPES must be"),
        ({"CATALOG_APPROVER_SCOPES": "{"}, "CATALOG_APPROVER_SCOPES is not valid JSON"),
        ({"CATALOG_LOGIN_FAILURE_LIMIT": "0"}, "CATALOG_LOGIN_FAILURE_LIMIT '0' is not a positive whole number"),
    ],
)
def test_malformed_variables_are_named(env: dict[str, str], message: str) -> None:
    with pytest.raises(SignInConfigError, match=re.escape(message)):
        sign_in_settings(env)


def _manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "METASTORE", "CATALOG_LDAP", "CATALOG_OIDC"))
    }
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO_ROOT, env={**clean, **env}, capture_output=True, text=True
    )


def test_check_deploy_is_clean_with_directory_sign_in() -> None:
    """The production settings with LDAP sign-in, local accounts off and the lockout on pass ``check --deploy``."""
    # given
    env = {**PRODUCTION_ENV, **LDAP, "CATALOG_LOCAL_ACCOUNTS": "false", "CATALOG_LDAP_BIND_PASSWORD": "x"}

    # when
    result = _manage("check", "--deploy", "--fail-level", "WARNING", env=env)

    # then
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout


def test_check_deploy_is_clean_with_openid_connect_sign_in() -> None:
    """The production settings with OpenID Connect sign-in and local accounts off pass ``check --deploy``."""
    result = _manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        env={**PRODUCTION_ENV, **OIDC, "CATALOG_LOCAL_ACCOUNTS": "false"},
    )

    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout


def test_a_malformed_sign_in_variable_stops_the_start() -> None:
    """The console does not start on a role map naming no role; the error names the variable and the entry."""
    # when
    result = _manage("check", env={**PRODUCTION_ENV, **LDAP, "CATALOG_ROLE_GROUPS": "owner=cn=x,dc=y"})

    # then
    assert result.returncode != 0
    assert "CATALOG_ROLE_GROUPS names 'owner', which is not one of: viewer, steward, approver, admin" in result.stderr
