"""Page slots: what another app registers is rendered where catalog_admin's templates name the slot."""

from __future__ import annotations

import pytest
from django.template import Context, Template

from catalog_admin import extensions
from catalog_admin.extensions import register_slot_content, slot_contents


@pytest.fixture
def empty_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extensions, "_registry", {})


def test_operations_fills_the_navigation_and_table_slots() -> None:
    """operations registers its top-bar links, the table's actions and its change history from its AppConfig.ready."""
    # when
    navigation = [c.template_name for c in slot_contents("navigation")]
    table = [c.template_name for c in slot_contents("table")]
    actions = [c.template_name for c in slot_contents("table_actions")]
    partition = [c.template_name for c in slot_contents("partition_actions")]

    # then
    assert navigation == ["operations/inc/navigation.html"]
    assert table == ["operations/inc/table_history.html"]
    assert actions == ["operations/inc/table_actions.html"]
    assert partition == ["operations/inc/partition_actions.html"]


def test_a_slot_renders_its_contents_in_order_with_their_context(empty_registry: None, tmp_path, settings) -> None:
    """Each content sees the page's context, the slot's arguments through its provider, and only its own values."""
    # given
    (tmp_path / "first.html").write_text("[{{ page }}:{{ name }}]")
    (tmp_path / "second.html").write_text("<{{ name|default:'none' }}{{ upper }}>")
    settings.TEMPLATES = [{**settings.TEMPLATES[0], "DIRS": [tmp_path]}]
    register_slot_content("table", "first.html", lambda context, **arguments: {"name": arguments["table"]})
    register_slot_content("table", "second.html", lambda context, **arguments: {"upper": arguments["table"].upper()})
    register_slot_content("table", "first.html", lambda context, **arguments: {})  # another provider: added again

    # when
    page = Template('{% load catalog %}{% page_slot "table" table="orders" %}|{% page_slot "navigation" %}|{{ name }}')
    rendered = page.render(Context({"page": "p&q"}))

    # then
    assert rendered == "[p&amp;q:orders]<noneORDERS>[p&amp;q:]||"


def test_registering_the_same_content_twice_adds_it_once(empty_registry: None) -> None:
    # given
    def provider(context: Context) -> dict:
        return {}

    # when
    register_slot_content("navigation", "a.html", provider)
    register_slot_content("navigation", "a.html", provider)

    # then
    assert len(slot_contents("navigation")) == 1


def test_an_unknown_slot_is_refused(empty_registry: None) -> None:
    with pytest.raises(ValueError, match="Unknown page slot 'sidebar'"):
        register_slot_content("sidebar", "a.html", lambda context: {})
