"""
Every response carries a Content-Security-Policy that allows our own scripts and styles only: no inline script, no
``eval`` (htmx runs with ``allowEval`` off); the templates hold nothing that such a policy would block.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

TEMPLATES = Path(settings.BASE_DIR) / "templates"
# What a policy without 'unsafe-inline' blocks: inline <script> blocks, on…= handlers, javascript: URLs,
# htmx's hx-on and js: values (evaluated code), and style attributes.
INLINE_CODE = re.compile(
    r"<script(?![^>]*\bsrc=)[^>]*>|\son[a-z]+\s*=|javascript:|hx-on|hx-vals=['\"]js:|hx-vars|\sstyle\s*=",
    re.IGNORECASE,
)


def directives(policy: str) -> dict[str, list[str]]:
    return {name: values for name, *values in (part.split() for part in policy.split(";") if part.strip())}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "path",
    ["/", "/m/hive31_pg/db/sales/", "/changes/", "/changes/audit/", "/api/metastores/", "/no-such-page/", "/api/x/"],
)
def test_every_response_carries_the_policy(admin_client: Client, path: str) -> None:
    """Pages, API answers and errors: scripts from 'self' only, neither 'unsafe-inline' nor 'unsafe-eval'."""
    # when
    response = admin_client.get(path)

    # then
    policy = directives(response["Content-Security-Policy"])
    assert policy["script-src"] == ["'self'"]
    assert policy["style-src"] == ["'self'"]
    assert policy["object-src"] == ["'none'"] and policy["frame-ancestors"] == ["'none'"]
    assert "'unsafe-eval'" not in response["Content-Security-Policy"]


@pytest.mark.django_db
def test_the_api_docs_allow_inline_styles_only(client: Client) -> None:
    """Swagger UI styles itself inline; its start-up script is a file of its own, so scripts stay 'self' only."""
    # when
    response = client.get("/api/docs/")

    # then
    policy = directives(response["Content-Security-Policy"])
    assert policy["script-src"] == ["'self'"]
    assert policy["style-src"] == ["'self'", "'unsafe-inline'"]


@pytest.mark.django_db
def test_htmx_runs_with_eval_off(admin_client: Client) -> None:
    """The page's htmx configuration turns off eval (hx-vals js:, hx-on, trigger filters) and its injected styles."""
    # when
    html = admin_client.get("/").content.decode()

    # then
    config = json.loads(re.search(r"<meta name=\"htmx-config\" content='([^']+)'>", html).group(1))
    assert (config["allowEval"], config["allowScriptTags"], config["includeIndicatorStyles"]) == (False, False, False)


def test_no_template_holds_inline_code() -> None:
    """No inline script, event handler, javascript: URL, htmx code attribute or style attribute in any template."""
    # when
    found = {
        f"{path.relative_to(TEMPLATES)}:{html[: match.start()].count(chr(10)) + 1}": match.group(0)
        for path in TEMPLATES.rglob("*.html")
        for html in [path.read_text()]
        for match in INLINE_CODE.finditer(html)
    }

    # then
    assert found == {}
