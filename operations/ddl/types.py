"""
Hive column types: each Hive line's type grammar, and the text Hive stores for a type in ``COLUMNS_V2.TYPE_NAME``.

The grammar is Hive's parser rule ``colType`` (``ql/src/java/org/apache/hadoop/hive/ql/parse/HiveParser.g``:
``type``, ``primitiveType``, ``listType``, ``structType``, ``mapType``, ``unionType``; lexer ``HiveLexer.g`` /
``HiveLexerParent.g``), completed by what ``BaseSemanticAnalyzer.getTypeStringFromAST`` / ``getTypeName`` and
serde2's type infos check before the type is stored:

- primitives ``tinyint smallint int bigint boolean float double string binary date timestamp``, ``integer``
  (= int, Hive 2.2.0, HIVE-14950), ``double precision`` (= double, Hive 2.2.0), ``decimal[(p[,s])]``,
  ``varchar(n)``, ``char(n)``; ``numeric`` (= decimal) from Hive 3.0.0 (HIVE-16764), ``dec`` (= decimal) in the
  4.x lexer only; ``real`` (= float: ``KW_REAL -> TOK_FLOAT``) in the 4.x parser only (2.3.10's lexer has no
  ``KW_REAL``); ``timestamp with local time zone`` and ``timestamplocaltz`` from Hive 3.0.0 (HIVE-16614).
  ``datetime`` parses but ``getTypeName`` refuses it (``ErrorMsg.UNSUPPORTED_TYPE``); interval types are
  commented out of ``primitiveType``; ``void`` and anything else are no column type.
- ``array<T>``, ``map<K,V>`` with a primitive key, ``struct<name:T [COMMENT 'c'], …>`` (at least one field, no
  name twice: ``AMBIGUOUS_STRUCT_ATTRIBUTE``; the comment is not part of the stored type), ``uniontype<T, …>``.
- parameters as serde2 validates them: ``BaseCharUtils.validateVarcharParameter`` (1 to 65535),
  ``validateCharParameter`` (1 to 255), ``HiveDecimalUtils.validateParameter`` (precision 1 to 38, scale 0 to 38
  and not above the precision); a bare ``decimal`` is ``decimal(10,0)`` and ``decimal(p)`` is ``decimal(p,0)``
  (``ParseUtils.getDecimalTypeTypeInfo``, ``HiveDecimal.USER_DEFAULT_PRECISION``/``USER_DEFAULT_SCALE``).

The stored text is Hive's: lower-case names, no spaces, qualified parameters (``array<int>``, ``decimal(10,2)``,
``map<string,array<int>>``, ``struct<a:int,b:string>``, ``timestamp with local time zone``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from catalog_admin.schema import SchemaVersion
from operations.ddl.errors import DdlParseError

__all__ = (
    "ANY_VERSION",
    "GRAMMARS",
    "TypeGrammar",
    "grammar_for",
    "parse_type",
    "read_type",
    "type_problem",
)

VARCHAR_MAX_LENGTH = 65535  # HiveVarchar.MAX_VARCHAR_LENGTH
CHAR_MAX_LENGTH = 255  # HiveChar.MAX_CHAR_LENGTH
DECIMAL_MAX_PRECISION = 38  # HiveDecimal.MAX_PRECISION (and MAX_SCALE)
DECIMAL_DEFAULT = (10, 0)  # HiveDecimal.USER_DEFAULT_PRECISION, USER_DEFAULT_SCALE

_SIMPLE = {
    "tinyint": "tinyint",
    "smallint": "smallint",
    "int": "int",
    "integer": "int",
    "bigint": "bigint",
    "boolean": "boolean",
    "float": "float",
    "string": "string",
    "binary": "binary",
    "date": "date",
}
_COMPLEX = ("array", "map", "struct", "uniontype")
_LOCAL_TIME_ZONE = "timestamp with local time zone"  # serdeConstants.TIMESTAMPLOCALTZ_TYPE_NAME

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+|--[^\n]*)
  | (?P<name>[A-Za-z0-9_]+)
  | (?P<quoted>`(?:[^`]|``)*`)
  | (?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
  | (?P<op>[<>(),:])
    """,
    re.VERBOSE,
)
# TypeInfoUtils.TypeInfoParser.isTypeChar: what a struct field name may hold to be read back from the stored text.
_FIELD_NAME = re.compile(r"[A-Za-z0-9_.$ ]+")


@dataclass(frozen=True)
class TypeGrammar:
    """The type words one Hive line's parser accepts beyond those every supported line accepts."""

    name: str
    numeric: bool  # NUMERIC = DECIMAL (3.0.0, HIVE-16764)
    dec: bool  # DEC = DECIMAL (the 4.x lexer, HiveLexerParent.g)
    local_time_zone: bool  # TIMESTAMP WITH LOCAL TIME ZONE, TIMESTAMPLOCALTZ (3.0.0, HIVE-16614)
    real: bool = False  # REAL = FLOAT (the 4.x parser's primitiveType)


GRAMMARS = {
    (2, 3): TypeGrammar("Hive 2.3", numeric=False, dec=False, local_time_zone=False),
    (3, 1): TypeGrammar("Hive 3.1", numeric=True, dec=False, local_time_zone=True),
    (4, 0): TypeGrammar("Hive 4.0", numeric=True, dec=True, local_time_zone=True, real=True),
}
# Before the metastore is known (a request being written): what at least one supported line accepts. The preview
# checks the metastore's own line again (operations.rules.check_column_types).
ANY_VERSION = TypeGrammar("Hive 2.3, 3.1 or 4.0", numeric=True, dec=True, local_time_zone=True, real=True)


def grammar_for(version: SchemaVersion | None) -> TypeGrammar:
    """The grammar of ``version``'s Hive line (:data:`ANY_VERSION` for None or a line without its own)."""
    if version is None:
        return ANY_VERSION
    return GRAMMARS.get(version.line, ANY_VERSION)


def parse_type(text: str, *, version: SchemaVersion | None = None) -> str:
    """``text`` as the type Hive stores; :class:`DdlParseError` (position in ``text``) unless it is one type."""
    stored, end = read_type(text, 0, grammar_for(version))
    rest = _Scanner(text, end).peek()
    if rest.kind != "end":
        raise DdlParseError(text, rest.position, f"unexpected {rest.describe()} after the column type {stored}")
    return stored


def type_problem(text: str, version: SchemaVersion) -> str:
    """Why ``version``'s Hive would not take ``text`` as a column type ('' if it would)."""
    try:
        parse_type(text, version=version)
    except DdlParseError as error:
        return error.message.split(": ", 1)[-1]
    return ""


def read_type(statement: str, position: int, grammar: TypeGrammar) -> tuple[str, int]:
    """The type starting at ``position`` in ``statement`` as Hive stores it, and where it ends."""
    scanner = _Scanner(statement, position)
    stored = _TypeParser(scanner, grammar).type()
    following = scanner.peek()
    if following.kind == "op" and following.text == ">":
        raise scanner.error(following, "unbalanced brackets in column type: this '>' closes nothing")
    return stored, scanner.position


@dataclass(frozen=True)
class _Token:
    kind: str  # name | quoted | string | op | other | end
    text: str
    position: int

    @property
    def word(self) -> str:
        return self.text.lower() if self.kind == "name" else ""

    def describe(self) -> str:
        return "the end of the statement" if self.kind == "end" else f"'{self.text}'"


class _Scanner:
    """Tokens of a type, read lazily from ``position`` so that the statement around it is not the type's concern."""

    def __init__(self, text: str, position: int) -> None:
        self.text = text
        self.position = position

    def peek(self) -> _Token:
        position = self.position
        while True:
            match = _TOKEN.match(self.text, position)
            if match is None:
                kind = "end" if position >= len(self.text) else "other"
                return _Token(kind, self.text[position : position + 1], position)
            if match.lastgroup != "ws":
                return _Token(match.lastgroup or "", match.group(), position)
            position = match.end()

    def advance(self) -> _Token:
        token = self.peek()
        self.position = token.position + len(token.text)
        return token

    def error(self, token: _Token, problem: str) -> DdlParseError:
        return DdlParseError(self.text, token.position, problem)


class _TypeParser:
    def __init__(self, scanner: _Scanner, grammar: TypeGrammar) -> None:
        self.scanner = scanner
        self.grammar = grammar

    def type(self) -> str:
        token = self.scanner.peek()
        if token.kind != "name" or token.text.isdigit():
            raise self.scanner.error(token, f"expected a column type, found {token.describe()}")
        if token.word in _COMPLEX:
            return getattr(self, token.word)()
        return self.primitive()

    def array(self) -> str:
        self.scanner.advance()
        self.expect("<")
        element = self.type()
        self.expect(">")
        return f"array<{element}>"

    def map(self) -> str:
        self.scanner.advance()
        self.expect("<")
        key = self.scanner.peek()
        if key.word in _COMPLEX:
            raise self.scanner.error(key, f"a map's key must be a primitive type, found {key.describe()}")
        key_type = self.primitive()
        self.expect(",")
        value = self.type()
        self.expect(">")
        return f"map<{key_type},{value}>"

    def struct(self) -> str:
        self.scanner.advance()
        self.expect("<")
        fields: list[str] = []
        names: set[str] = set()
        while True:
            token, name = self.field_name()
            if name in names:
                raise self.scanner.error(token, f"the struct field {name} is named twice")
            names.add(name)
            self.expect(":")
            fields.append(f"{name}:{self.type()}")
            if self.scanner.peek().word == "comment":
                self.scanner.advance()
                self.string()
            if not self.accept(","):
                break
        self.expect(">")
        return f"struct<{','.join(fields)}>"

    def uniontype(self) -> str:
        self.scanner.advance()
        self.expect("<")
        members = [self.type()]
        while self.accept(","):
            members.append(self.type())
        self.expect(">")
        return f"uniontype<{','.join(members)}>"

    def primitive(self) -> str:
        token = self.scanner.advance()
        word = token.word
        if word in _SIMPLE:
            return _SIMPLE[word]
        if word == "double":
            if self.scanner.peek().word == "precision":
                self.scanner.advance()
            return "double"
        if word == "timestamp":
            return self.timestamp(token)
        if word == "real":
            self.require(self.grammar.real, token, "REAL")
            return "float"
        if word == "timestamplocaltz":
            self.require(self.grammar.local_time_zone, token, "TIMESTAMPLOCALTZ")
            return _LOCAL_TIME_ZONE
        if word in ("decimal", "numeric", "dec"):
            self.require(word == "decimal" or getattr(self.grammar, word), token, word.upper())
            return self.decimal()
        if word in ("varchar", "char"):
            limit = VARCHAR_MAX_LENGTH if word == "varchar" else CHAR_MAX_LENGTH
            return f"{word}({self.length(word.capitalize(), limit)})"
        if word == "datetime":
            raise self.scanner.error(token, "DATETIME type isn't supported yet.")
        raise self.scanner.error(token, f"{token.describe()} is not a column type of {self.grammar.name}")

    def timestamp(self, token: _Token) -> str:
        if self.scanner.peek().word != "with":
            return "timestamp"
        self.require(self.grammar.local_time_zone, token, "TIMESTAMP WITH LOCAL TIME ZONE")
        self.scanner.advance()
        for word in ("local", "time", "zone"):
            found = self.scanner.peek()
            if found.word != word:
                raise self.scanner.error(found, f"expected {word.upper()}, found {found.describe()}")
            self.scanner.advance()
        return _LOCAL_TIME_ZONE

    def decimal(self) -> str:
        precision, scale = DECIMAL_DEFAULT
        if self.accept("("):
            start = self.scanner.peek()
            precision = self.number()
            scale = self.number() if self.accept(",") else 0
            self.expect(")")
            if not 1 <= precision <= DECIMAL_MAX_PRECISION:
                raise self.scanner.error(start, f"Decimal precision out of allowed range [1,{DECIMAL_MAX_PRECISION}]")
            if not 0 <= scale <= DECIMAL_MAX_PRECISION:
                raise self.scanner.error(start, f"Decimal scale out of allowed range [0,{DECIMAL_MAX_PRECISION}]")
            if scale > precision:
                raise self.scanner.error(start, "Decimal scale must be less than or equal to precision")
        return f"decimal({precision},{scale})"

    def length(self, kind: str, limit: int) -> int:
        self.expect("(")
        start = self.scanner.peek()
        length = self.number()
        self.expect(")")
        if not 1 <= length <= limit:
            raise self.scanner.error(start, f"{kind} length {length} out of allowed range [1, {limit}]")
        return length

    def field_name(self) -> tuple[_Token, str]:
        token = self.scanner.peek()
        if token.kind == "name":
            self.scanner.advance()
            return token, token.text
        if token.kind == "quoted":
            self.scanner.advance()
            name = token.text[1:-1].replace("``", "`")
            if not _FIELD_NAME.fullmatch(name):
                raise self.scanner.error(
                    token, f"the struct field name {name!r} cannot be read back from the stored type"
                )
            return token, name
        raise self.scanner.error(token, f"expected a struct field name, found {token.describe()}")

    def number(self) -> int:
        token = self.scanner.peek()
        if token.kind != "name" or not token.text.isdigit():
            raise self.scanner.error(token, f"expected a whole number, found {token.describe()}")
        self.scanner.advance()
        return int(token.text)

    def string(self) -> None:
        token = self.scanner.peek()
        if token.kind != "string":
            raise self.scanner.error(token, f"expected a quoted comment, found {token.describe()}")
        self.scanner.advance()

    def require(self, allowed: bool, token: _Token, what: str) -> None:
        if not allowed:
            raise self.scanner.error(token, f"{what} is not a column type of {self.grammar.name}")

    def accept(self, op: str) -> bool:
        token = self.scanner.peek()
        if token.kind == "op" and token.text == op:
            self.scanner.advance()
            return True
        return False

    def expect(self, op: str) -> None:
        if not self.accept(op):
            token = self.scanner.peek()
            raise self.scanner.error(token, f"expected '{op}', found {token.describe()}")
