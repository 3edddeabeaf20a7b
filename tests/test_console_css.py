"""The console's style sheet keeps its badges readable: every badge's text against its background reaches WCAG AA's
4.5:1 for small text (grey "muted" badges were 2.33:1)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CSS = Path(__file__).resolve().parents[1] / "static" / "css" / "console.css"
RULE = re.compile(r"^(\.badge(?:\.[\w-]+)*)\s*\{([^}]*)\}", re.MULTILINE)
AA_SMALL_TEXT = 4.5


def luminance(colour: str) -> float:
    """WCAG's relative luminance of a #rrggbb colour."""
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(text: str, background: str) -> float:
    lighter, darker = sorted((luminance(text), luminance(background)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def badge_colours() -> dict[str, tuple[str, str]]:
    """``{selector: (text, background)}`` of the badge rules that set both as #rrggbb (or a variable of :root)."""
    source = CSS.read_text()
    variables = dict(re.findall(r"--([\w-]+):\s*(#[0-9a-fA-F]{6})", source))
    found = {}
    for selector, body in RULE.findall(source):
        declarations = dict(re.findall(r"(background|color):\s*([^;]+);", body))
        resolved = {k: variables.get(v.strip()[6:-1], v.strip()) if v.strip().startswith("var(") else v.strip()
                    for k, v in declarations.items()}  # fmt: skip
        if all(re.fullmatch(r"#[0-9a-fA-F]{6}", resolved.get(k, "")) for k in ("color", "background")):
            found[selector] = (resolved["color"], resolved["background"])
    return found


def test_the_contrast_check_knows_a_failing_pair() -> None:
    assert round(contrast("#98a2b3", "#f2f4f7"), 2) == 2.34  # the old grey badge
    assert round(contrast("#000000", "#ffffff"), 1) == 21.0


@pytest.mark.parametrize(("selector", "colours"), sorted(badge_colours().items()))
def test_every_badge_reaches_aa_contrast(selector: str, colours: tuple[str, str]) -> None:
    assert contrast(*colours) >= AA_SMALL_TEXT, f"{selector}: {colours} is {contrast(*colours):.2f}:1"


def test_the_grey_badges_are_checked() -> None:
    assert {".badge", ".badge.muted"} <= set(badge_colours())
