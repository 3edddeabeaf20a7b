"""Every template's comments are comments: Django's ``{# … #}`` ends on its own line, so one spanning lines is
rendered as text on the page (use ``{% comment %}`` for those)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.template.base import Lexer, TokenType

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = sorted((ROOT / "templates").rglob("*.html"))


def raw_comment_lines(source: str) -> list[int]:
    """The lines of ``source`` on which a ``{#`` or ``#}`` is left as text (not closed on its line)."""
    text = [token for token in Lexer(source).tokenize() if token.token_type == TokenType.TEXT]
    found: list[int] = []
    for token in text:
        offset = 0 if token.lineno is None else token.lineno
        found += [offset + i for i, line in enumerate(token.contents.split("\n")) if "{#" in line or "#}" in line]
    return found


def test_the_check_finds_a_comment_spanning_lines() -> None:
    """The check itself: a two-line ``{# … #}`` is found, a one-line one and ``{% comment %}`` are not."""
    # given
    source = "{# one line #}\n<p>{# starts here\n ends here #}</p>\n{% comment %}\nmany\n{% endcomment %}\n"
    # when
    found = raw_comment_lines(source)
    # then
    assert found == [2, 3]


@pytest.mark.parametrize("path", TEMPLATES, ids=[str(p.relative_to(ROOT)) for p in TEMPLATES])
def test_no_comment_is_left_as_text(path: Path) -> None:
    """No template shows a ``{# … #}`` that spans lines as text on the page."""
    # when
    found = raw_comment_lines(path.read_text())
    # then
    assert found == [], f"{path.relative_to(ROOT)}: a {{# … #}} spanning lines on line(s) {found}"
