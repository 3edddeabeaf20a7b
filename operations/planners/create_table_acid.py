"""
``TransactionalValidationListener.handleCreateTableTransactionalProp`` for a new table: the ``transactional`` key
normalized (any case; ``'false'`` dropped; ``'true'`` kept as ``true``), and from 3.0 ``transactional_properties``
lower-cased and defaulted to ``default`` (``normalizeTransactionalPropertyDefault``), with Hive's refusals.
"""

from __future__ import annotations

from catalog_admin.hive.versions import SchemaVersion
from operations.rules import Finding

__all__ = ("TRANSACTIONAL", "TRANSACTIONAL_PROPERTIES", "acid_value_blockers", "normalized_transactional")

TRANSACTIONAL = "transactional"
TRANSACTIONAL_PROPERTIES = "transactional_properties"
KNOWN_PROPERTIES = ("default", "insert_only")


def _value(params: dict[str, str], key: str) -> tuple[str | None, str | None]:
    """The key as written (any case) and its value."""
    for written, value in params.items():
        if written.lower() == key:
            return written, value
    return None, None


def normalized_transactional(params: dict[str, str], version: SchemaVersion) -> dict[str, str]:
    """``params`` as the listener leaves them on a table it accepts."""
    written, value = _value(params, TRANSACTIONAL)
    if written is None:
        return params
    params = {k: v for k, v in params.items() if k != written}
    if (value or "").lower() != "true":
        return params  # 'false' is dropped; any other value is a blocker (acid_value_blockers)
    params[TRANSACTIONAL] = "true"
    if version.capabilities.create_table_normalizes_transactional_properties:
        key, properties = _value(params, TRANSACTIONAL_PROPERTIES)
        params = {k: v for k, v in params.items() if k != key}
        params[TRANSACTIONAL_PROPERTIES] = (properties or "default").lower()
    return params


def acid_value_blockers(params: dict[str, str], version: SchemaVersion, name: str, sorted_: bool) -> list[Finding]:
    """A ``transactional`` other than true/false; from 3.0 an unknown ``transactional_properties`` and a sorted ACID
    table (``checkSorted``)."""
    _written, value = _value(params, TRANSACTIONAL)
    if value is None or value.lower() == "false":
        return []
    if value.lower() != "true":
        return [
            Finding(
                "acid_value", "acid", f"'transactional' property of TBLPROPERTIES may only have value 'true': {name}"
            )
        ]
    if not version.capabilities.create_table_normalizes_transactional_properties:
        return []
    blockers = []
    _key, properties = _value(params, TRANSACTIONAL_PROPERTIES)
    if properties is not None and properties.lower() not in KNOWN_PROPERTIES:
        blockers.append(
            Finding(
                "acid_properties",
                "acid",
                f"Invalid transactional properties specified for {name} "
                f"with the error unknown value {properties.lower()} for transactional_properties",
            )
        )
    if sorted_ and (properties or "default").lower() == "default":
        blockers.append(
            Finding("acid_sorted", "acid", f"Table {name} cannot support full ACID functionality since it is sorted.")
        )
    return blockers
