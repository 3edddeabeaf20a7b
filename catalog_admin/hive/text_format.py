"""
How Hive's LazySimpleSerDe reads a text row: its delimiters, escape character and null format from SERDE_PARAMS.

Follows ``serde/.../lazy/LazySerDeParameters.java`` (constructor: ``field.delim`` falling back to
``serialization.format``, ``serialization.null.format`` default ``\\N``, ``escape.delim``,
``serialization.escape.crlf``), ``LazyUtils.getByte`` (a number is a byte value: ``"1"`` is ``\\x01``, ``"9"`` a tab)
and ``LazyUtils.copyAndEscapeStringDataToText`` (an escaped byte is kept literally; ``\\r``/``\\n`` when escape.crlf).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ("TextFormat", "get_byte", "split_fields")

DEFAULT_FIELD_DELIMITER = "\x01"
DEFAULT_NULL_FORMAT = "\\N"


def get_byte(value: str | None, default: str) -> str:
    """``LazyUtils.getByte``: a decimal byte value (``Byte.parseByte``) or else the value's first character."""
    if not value:
        return default
    try:
        number = int(value)
    except ValueError:
        return value[0]
    return chr(number & 0xFF) if -128 <= number <= 127 else value[0]


def _null_format(params: dict[str, str | None]) -> str:
    value = params.get("serialization.null.format")
    return DEFAULT_NULL_FORMAT if value is None else value


@dataclass(frozen=True)
class TextFormat:
    """A text table's row format: field delimiter, null format, escape character."""

    field_delimiter: str = DEFAULT_FIELD_DELIMITER
    null_format: str = DEFAULT_NULL_FORMAT
    escape: str | None = None
    escape_crlf: bool = False

    @classmethod
    def from_serde_params(cls, params: dict[str, str | None]) -> TextFormat:
        delimiter = params.get("field.delim") or params.get("serialization.format")
        escape = params.get("escape.delim")
        return cls(
            field_delimiter=get_byte(delimiter, DEFAULT_FIELD_DELIMITER),
            null_format=_null_format(params),
            escape=get_byte(escape, "\\") if escape else None,
            escape_crlf=(params.get("serialization.escape.crlf") or "").lower() == "true",
        )


def split_fields(line: str, text: TextFormat, count: int) -> list[str | None]:
    """The first ``count`` fields of ``line`` (missing ones are None); a field whose raw bytes are the null format is
    None (``LazyStruct`` compares before unescaping)."""
    fields: list[str | None] = []
    raw_start, current, i = 0, [], 0
    while i < len(line):
        c = line[i]
        if text.escape is not None and c == text.escape and i + 1 < len(line):
            following = line[i + 1]
            crlf = text.escape_crlf and following in "rn"
            current.append(("\r" if following == "r" else "\n") if crlf else following)
            i += 2
            continue
        if c == text.field_delimiter:
            fields.append(_field(line[raw_start:i], current, text))
            raw_start, current = i + 1, []
        else:
            current.append(c)
        i += 1
    fields.append(_field(line[raw_start:], current, text))
    values = fields[:count]
    return values + [None] * (count - len(values))


def _field(raw: str, unescaped: list[str], text: TextFormat) -> str | None:
    return None if raw == text.null_format else "".join(unescaped)
