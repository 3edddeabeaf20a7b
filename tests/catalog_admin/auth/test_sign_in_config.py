"""Sign-in settings from the environment (catalog_admin/auth/config.py): what a site sets, what it is refused."""

from __future__ import annotations

import re

import pytest

from catalog_admin.auth.config import LDAP_BACKEND, LOCAL_BACKEND, LOCKOUT_BACKEND, SignInConfigError, sign_in_settings

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


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"CATALOG_LOCAL_ACCOUNTS": "false"}, "CATALOG_LOCAL_ACCOUNTS=false needs CATALOG_LDAP_URL"),
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
