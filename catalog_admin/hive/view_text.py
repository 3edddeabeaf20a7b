"""
Database references in a view's text, and their rewrite when databases are renamed (a metastore merge's renames).

Hive writes ``VIEW_EXPANDED_TEXT`` with every table as `` `db`.`table` `` (its ``UnparseTranslator``), columns
qualified by their table or alias only; ``VIEW_ORIGINAL_TEXT`` is the text as typed. Spark stores its text as typed
in both and records the database its unqualified names resolve in as a table property
(``CatalogTable.VIEW_CATALOG_AND_NAMESPACE_PART_PREFIX`` ``view.catalogAndNamespace.part.1`` since Spark 3.0,
``VIEW_DEFAULT_DATABASE`` ``view.default.database`` before; apache/spark
sql/catalyst/.../catalog/interface.scala, ``object CatalogTable``). Its other view properties name no database:
``view.query.out.*`` the output columns, ``view.sqlConfig.*`` settings, ``view.referredTempViewNames`` temporary views
(which a stored view cannot read).

A name is rewritten only where it can only be a database: the first part of a dotted name (or the part after
``spark_catalog.``), in a text that uses the name nowhere else. Everything else is a problem
(:func:`view_text_problems`, a merge blocker): the name also used as a table, alias or column (``sales.x`` could then
be a column of an alias ``sales``), a reference-shaped ``sales.`` inside a string literal or comment (text a tokenizer
cannot tell from a reference another engine may read), an unterminated quote, a Presto/Trino view (its query is
Base64 in a comment), or unqualified table names in a text that records no database to resolve them in.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ("DATABASE_KEYS", "rewrite_database_param", "rewrite_view_text", "view_text_problems")

DATABASE_KEYS = ("view.catalogAndNamespace.part.1", "view.default.database")
SPARK_CATALOG = "spark_catalog"
_TOKEN = re.compile(
    r"""(?P<ws>\s+)
    |(?P<comment>--[^\n]*|/\*.*?\*/)
    |(?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
    |(?P<quoted>`(?:[^`]|``)*`)
    |(?P<number>\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![A-Za-z_]))
    |(?P<word>[A-Za-z0-9_$]+)
    |(?P<other>.)""",
    re.VERBOSE | re.DOTALL,
)
_SKIPPED = ("ws", "comment")
_ENCODED = re.compile(r"^\s*/\*\s*(Presto|Trino) View", re.IGNORECASE)
_SOURCE_KEYWORDS = ("from", "join")


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str

    @property
    def is_name(self) -> bool:
        return self.kind in ("word", "quoted")

    @property
    def name(self) -> str:
        """The identifier as Hive compares it: unquoted, lower-case."""
        return (self.text[1:-1].replace("``", "`") if self.kind == "quoted" else self.text).lower()


def rewrite_view_text(text: str | None, renames: Mapping[str, str]) -> str | None:
    """``text`` with every database reference to a key of ``renames`` (lower-case) spelled as its new name, quoted as
    it was. A text with :func:`view_text_problems` is returned as it is (the merge is blocked before it runs)."""
    if not text or not renames or view_text_problems(text, None, renames, check_unqualified=False):
        return text
    tokens = _tokens(text)
    replaced = {i for i in _database_positions(tokens) if tokens[i].name in renames}
    return "".join(_spelled(t, renames[t.name]) if i in replaced else t.text for i, t in enumerate(tokens))


def view_text_problems(
    original: str | None, expanded: str | None, renames: Mapping[str, str], *, check_unqualified: bool
) -> tuple[str, ...]:
    """Why one view's texts cannot be rewritten safely: the problems of each, and names used as a database in one
    text and otherwise in the other. ``check_unqualified``: the view records no database for its unqualified names
    and its own database is renamed, so unqualified table names in the text engines run (the expanded one; Hive's
    original text is only shown) are a problem."""
    texts = [(text, check and check_unqualified) for text, check in ((original, False), (expanded, True)) if text]
    problems: list[str] = []
    tokens = [_tokens(text) for text, _ in texts]
    for (text, check), listed in zip(texts, tokens, strict=True):
        problems += _problems(text, listed, renames, check)
    if not problems:
        databases = set().union(*(_database_uses(t, renames) for t in tokens))
        others = set().union(*(_other_uses(t, renames) for t in tokens))
        problems += [_ambiguous(name) for name in sorted(databases & others)]
    return tuple(dict.fromkeys(problems))


def rewrite_database_param(key: str | None, value: str | None, renames: Mapping[str, str]) -> str | None:
    """A Spark view property's value: the renamed database's new name when ``key`` records a view's database."""
    if key in DATABASE_KEYS and value is not None:
        return renames.get(value.lower(), value)
    return value


def _spelled(token: _Token, name: str) -> str:
    return "`" + name.replace("`", "``") + "`" if token.kind == "quoted" else name


def _tokens(text: str) -> list[_Token]:
    return [_Token(m.lastgroup or "other", m.group()) for m in _TOKEN.finditer(text)]


def _significant(tokens: list[_Token]) -> list[int]:
    return [i for i, t in enumerate(tokens) if t.kind not in _SKIPPED]


def _database_positions(tokens: list[_Token]) -> list[int]:
    """Indexes of names in a database's place: first of ``a.b`` (not after a dot) or after ``spark_catalog.``."""
    sig = _significant(tokens)
    found = []
    for n, i in enumerate(sig):
        if not tokens[i].is_name or not _is_dot(tokens, sig, n + 1) or not _is_name(tokens, sig, n + 2):
            continue
        after_dot = _is_dot(tokens, sig, n - 1)
        after_catalog = after_dot and _is_name(tokens, sig, n - 2) and tokens[sig[n - 2]].name == SPARK_CATALOG
        if not after_dot or (after_catalog and not _is_dot(tokens, sig, n - 3)):
            found.append(i)
    return found


def _database_uses(tokens: list[_Token], renames: Mapping[str, str]) -> set[str]:
    return {tokens[i].name for i in _database_positions(tokens) if tokens[i].name in renames}


def _other_uses(tokens: list[_Token], renames: Mapping[str, str]) -> set[str]:
    positions = set(_database_positions(tokens))
    return {t.name for i, t in enumerate(tokens) if t.is_name and t.name in renames and i not in positions}


def _problems(text: str, tokens: list[_Token], renames: Mapping[str, str], check_unqualified: bool) -> list[str]:
    if _ENCODED.match(text):
        return ["is a Presto/Trino view (its query is encoded in a comment the merge cannot rewrite)"]
    problems = []
    pairs = zip(tokens, tokens[1:], strict=False)
    if any(t.kind == "other" and t.text in "'\"`" for t in tokens) or any(a.text + b.text == "/*" for a, b in pairs):
        problems.append("has an unterminated quote or comment")
    for token in tokens:
        if token.kind in ("string", "comment"):
            named = sorted(n for n in renames if _reference_in(token.text, n))
            problems += [f"names '{n}.' inside a string literal or comment" for n in named]
    if check_unqualified and _unqualified_sources(tokens):
        problems.append("reads unqualified table names and records no database to resolve them in")
    problems += [_ambiguous(n) for n in sorted(_database_uses(tokens, renames) & _other_uses(tokens, renames))]
    return problems


def _ambiguous(name: str) -> str:
    return f"uses '{name}' both as a database and as a table, alias or column name"


def _reference_in(text: str, name: str) -> bool:
    """A ``name.`` (bare or backquoted) inside a literal or comment."""
    return re.search(rf"(?<![\w`])`?{re.escape(name)}`?\s*\.", text, re.IGNORECASE) is not None


def _unqualified_sources(tokens: list[_Token]) -> list[str]:
    """Names right after FROM or JOIN that are not dotted and not a common table expression of the text."""
    sig = _significant(tokens)
    ctes = {
        tokens[i].name
        for n, i in enumerate(sig)
        if tokens[i].is_name and _word(tokens, sig, n + 1) == "as" and _text(tokens, sig, n + 2) == "("
    }
    return [
        tokens[sig[n + 1]].name
        for n, i in enumerate(sig)
        if _word(tokens, sig, n) in _SOURCE_KEYWORDS
        and _is_name(tokens, sig, n + 1)
        and not _is_dot(tokens, sig, n + 2)
        and tokens[sig[n + 1]].name not in ctes
    ]


def _is_dot(tokens: list[_Token], sig: list[int], n: int) -> bool:
    return _text(tokens, sig, n) == "."


def _is_name(tokens: list[_Token], sig: list[int], n: int) -> bool:
    return 0 <= n < len(sig) and tokens[sig[n]].is_name


def _word(tokens: list[_Token], sig: list[int], n: int) -> str | None:
    return tokens[sig[n]].text.lower() if 0 <= n < len(sig) and tokens[sig[n]].kind == "word" else None


def _text(tokens: list[_Token], sig: list[int], n: int) -> str | None:
    return tokens[sig[n]].text if 0 <= n < len(sig) else None
