"""
The bodies the change-request API accepts, turned into service arguments.

They only shape and type-check the body; the services decide everything else (permissions, states, Hive rules)
and refuse with the shared error vocabulary. A Hive statement is parsed here (``ddl_parse_error`` with its
position), and a structured operation is checked by rendering it as Hive DDL and parsing that back.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from catalog_admin.errors import ApplicationError, ErrorCode
from operations.api.serializers.base import operation_schema
from operations.database_specs import DATABASE_SPEC_KINDS, RevertDatabase, database_spec_from_dict
from operations.ddl.parser import DdlParseError, parse_alter
from operations.specs import SPEC_KINDS, AlterSpec, spec_from_dict

# The database statements an operation may name (a revert is requested from the request it reverts).
DATABASE_OPERATIONS = tuple(kind for kind in DATABASE_SPEC_KINDS if kind != RevertDatabase.kind)

__all__ = (
    "ApproveSerializer",
    "ChangeRequestCreateSerializer",
    "ChangeRequestUpdateSerializer",
    "CommentCreateSerializer",
    "ExecuteSerializer",
    "OperationInputField",
    "RejectSerializer",
    "RevertSerializer",
    "SettleSerializer",
    "spec_from_operation",
)


@extend_schema_field(
    operation_schema(
        list(SPEC_KINDS),
        "A structured ALTER: its kind, its target table and the kind's own fields, shaped like the `operation` of "
        "a change request (e.g. rename_table: `new`; add_columns: `columns` [{name, type, comment}], `cascade`; "
        "set_tblproperties: `properties` [[key, value], …]; drop_partitions: `specs` [[{key, op, value}, …], …]). "
        "A database statement names its database instead of a target: create_database `name`, `comment`, `location`, "
        "`properties`, `if_not_exists`; alter_database `name`, `action` (set_properties, set_owner, set_location, "
        "set_managed_location) and its fields; drop_database `name`, `if_exists`, `cascade`.",
    )
)
class OperationInputField(serializers.JSONField):
    """A structured operation as JSON (checked by :func:`spec_from_operation`)."""


def spec_from_operation(operation: Any) -> AlterSpec:
    """
    The spec of a structured operation, checked by rendering it as Hive DDL and parsing that back.

    The round trip gives the operation exactly the types a typed statement would have, and refuses what no
    supported statement can express; every refusal is ``invalid_parameter`` naming ``operation``.
    """
    supported = [*SPEC_KINDS, *DATABASE_OPERATIONS]
    if isinstance(operation, dict) and operation.get("kind") in DATABASE_OPERATIONS:
        return _database_spec(operation)
    if not isinstance(operation, dict) or operation.get("kind") not in SPEC_KINDS:
        kind = operation.get("kind") if isinstance(operation, dict) else None
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            f"operation must be an object whose kind is one of {', '.join(supported)}, not {kind!r}.",
            {"parameter": "operation", "supported": supported},
        )
    if _holds_nul(operation):
        reason = "it holds a NUL (0x00) character"
    else:
        try:
            statement = spec_from_dict(operation).to_ddl()
            return parse_alter(statement)
        except DdlParseError as exc:
            reason = exc.message
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            reason = f"{type(exc).__name__}: {exc}"
    raise ApplicationError(
        ErrorCode.INVALID_PARAMETER,
        f"operation is not a valid {operation['kind']} operation ({reason}).",
        {"parameter": "operation", "kind": operation["kind"], "reason": reason},
    )


def _database_spec(operation: dict[str, Any]) -> AlterSpec:
    """A database statement's operation (issue 27), checked the same way: rendered as Hive DDL and parsed back."""
    try:
        if _holds_nul(operation):
            raise ValueError("it holds a NUL (0x00) character")
        return parse_alter(database_spec_from_dict(operation).to_ddl())
    except (DdlParseError, KeyError, TypeError, ValueError) as exc:
        reason = exc.message if isinstance(exc, DdlParseError) else str(exc)
    raise ApplicationError(
        ErrorCode.INVALID_PARAMETER,
        f"operation is not a valid {operation['kind']} operation ({reason}).",
        {"parameter": "operation", "kind": operation["kind"], "reason": reason},
    )


def _holds_nul(value: Any) -> bool:
    """Whether any key or string of a JSON value holds a NUL character (PostgreSQL cannot compare one)."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_holds_nul(key) or _holds_nul(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_holds_nul(item) for item in value)
    return False


class _SpecInputSerializer(serializers.Serializer):
    statement = serializers.CharField(
        required=False, help_text="One Hive ALTER TABLE statement, as typed in Beeline (or give `operation`)."
    )
    operation = OperationInputField(required=False)
    reason = serializers.CharField(required=False, allow_blank=True, help_text="Why the change is needed.")

    def spec(self, attrs: dict[str, Any], *, required: bool) -> AlterSpec | None:
        """The statement's or the operation's spec; exactly one of them (or, when not ``required``, neither)."""
        given = [name for name in ("statement", "operation") if attrs.get(name) not in (None, "")]
        if len(given) > 1 or (required and not given):
            raise ApplicationError(
                ErrorCode.INVALID_PARAMETER,
                "Give either statement (Hive DDL) or operation (structured), "
                + ("not both." if given else "one of them."),
                {"parameter": "statement" if not given else "operation"},
            )
        if not given:
            return None
        if given == ["statement"]:
            return parse_alter(attrs["statement"])
        return spec_from_operation(attrs["operation"])


class ChangeRequestCreateSerializer(_SpecInputSerializer):
    """A new draft: a statement or an operation, on a metastore (the default one when omitted)."""

    metastore = serializers.CharField(
        required=False, allow_blank=True, help_text="Registered metastore name; the default metastore when omitted."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        return {
            "spec": self.spec(attrs, required=True),
            "metastore": attrs.get("metastore") or None,
            "reason": attrs.get("reason", ""),
        }


class ChangeRequestUpdateSerializer(_SpecInputSerializer):
    """Edit a draft: a new statement or operation, a new reason, or both (what is omitted stays)."""

    metastore = serializers.CharField(
        required=False, help_text="Must be the request's own metastore: a request stays on its metastore."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        return {
            "spec": self.spec(attrs, required=False),
            "reason": attrs.get("reason"),
            "metastore": attrs.get("metastore"),
        }


class ApproveSerializer(serializers.Serializer):
    comment = serializers.CharField(required=False, allow_blank=True, default="", help_text="Optional remark.")


class RejectSerializer(serializers.Serializer):
    comment = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="Why the change is rejected (required)."
    )


class ExecuteSerializer(serializers.Serializer):
    at = serializers.DateTimeField(
        required=False,
        allow_null=True,
        default=None,
        help_text="ISO 8601 time to run at (scheduled); omitted or null: execute now as a background job.",
    )


class SettleSerializer(serializers.Serializer):
    outcome = serializers.ChoiceField(
        choices=["succeeded", "failed"], help_text="How the stuck execution ended (check the metastore first)."
    )
    reason = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="Why it is settled so (required; audited)."
    )


class RevertSerializer(serializers.Serializer):
    reason = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="Why; 'Revert of request #<id>' when omitted."
    )


class CommentCreateSerializer(serializers.Serializer):
    body = serializers.CharField(allow_blank=True, trim_whitespace=False, help_text="The remark (not empty).")
