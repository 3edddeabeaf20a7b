"""
Extension points of the pages: named slots that another app fills without this app naming it.

The project's wiring (``settings.INSTALLED_APPS``, the root ``urls``) is the composition root: the only place that
names both apps. Below it, ``catalog_admin`` never imports ``operations`` and its templates never load its tags;
``operations`` fills the slots from its ``AppConfig.ready`` instead. A template renders a slot with
``{% page_slot "name" argument=value %}`` (``catalog`` tags); an empty slot renders nothing.
After NetBox's plugin template extensions (``netbox/netbox/plugins/templates.py``, ``PluginTemplateExtension``).

Slots:

- ``navigation``: the top bar's links after the metastore switcher and search (the page's context).
- ``table_actions``: the head of a table's page, under its title: the actions on it (the same arguments as ``table``,
  and ``traits``: its ``TableTraits``, read with the page).
- ``partition_actions``: the head of a partition's page (the same arguments and ``partition``: its name).
- ``table``: the end of a table's page (arguments ``metastore``, ``database``, ``table``: names).
- ``database``: the head of a database's page (arguments ``metastore``, ``database``: names).
- ``metastore``: the end of a metastore's database list (argument ``metastore``: its name).
- ``database``: the end of a database's page (arguments ``metastore``, ``database``: names).
- ``partitions``: after a table's partition filters (the same arguments and ``anomaly``, the list's anomaly filter).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ("SLOTS", "SlotContent", "register_slot_content", "slot_contents")

SLOTS = ("navigation", "table_actions", "partition_actions", "table", "partitions", "metastore", "database")

ContextProvider = Callable[..., Mapping[str, Any]]


@dataclass(frozen=True)
class SlotContent:
    """A template rendered into a slot, with the extra context ``context(page_context, **arguments)`` returns."""

    template_name: str
    context: ContextProvider


_registry: dict[str, tuple[SlotContent, ...]] = {}


def register_slot_content(slot: str, template_name: str, context: ContextProvider) -> None:
    """Add ``template_name`` to ``slot`` (in registration order); registering the same content twice adds it once."""
    if slot not in SLOTS:
        raise ValueError(f"Unknown page slot '{slot}'; the slots are {', '.join(SLOTS)}.")
    content = SlotContent(template_name=template_name, context=context)
    if content not in _registry.get(slot, ()):
        _registry[slot] = (*_registry.get(slot, ()), content)


def slot_contents(slot: str) -> tuple[SlotContent, ...]:
    return _registry.get(slot, ())
