"""
Table and database names: Hive's own ``validateName`` per version, and the console's stricter "safe directory name".

Hive builds a managed table's directory from its name (``Warehouse.getDefaultTablePath``: parent + "/" + name) and
parses locations as URIs, so a name Hive accepts can still point outside its parent: ``../../tmp/x`` (4.x allows
``.`` and ``/``), ``a/b`` (every version allows ``/``: the data lands inside another directory), ``x?y`` or ``x#y``
(the URI parser cuts the path there), ``%2F`` (decoded to ``/``). The console refuses to build such destinations.
"""

from __future__ import annotations

import re

from catalog_admin.hive.versions import SchemaVersion

__all__ = ("SPECIAL_CHARACTERS_2", "SPECIAL_CHARACTERS_4", "directory_name_problems", "is_valid_name")

# MetaStoreUtils.specialCharactersInTableNames, 2.3 (metastore/src/java/org/apache/hadoop/hive/metastore/
# MetaStoreUtils.java) and 3.1 (standalone-metastore/src/main/java/org/apache/hadoop/hive/metastore/utils/
# MetaStoreUtils.java): "Right now we only support one special character '/'".
SPECIAL_CHARACTERS_2 = "/"
# MetaStoreUtils.SPECIAL_CHARACTERS_IN_TABLE_NAMES, 4.x (standalone-metastore/metastore-common/src/main/java/org/
# apache/hadoop/hive/metastore/utils/MetaStoreUtils.java), "standard" then "non-standard" ('_' is in \w already).
SPECIAL_CHARACTERS_4 = " \"%&'()*+,-./:;<=>?[]_|{}$^" + "!~#@`"
# What a directory name must not contain or be: the console's own rule, on top of Hive's.
_PATH_CHARACTERS = {
    "/": "'/' separates directories, so the data would go into a nested directory",
    "\\": "'\\' separates directories on some filesystems",
    "?": "a location URI ends its path at '?'",
    "#": "a location URI ends its path at '#'",
    "%": "'%' starts an escape sequence in a location URI",
}
_RELATIVE_NAMES = {".": "'.' names the parent directory itself", "..": "'..' climbs out of the parent directory"}


def _name_pattern(special: str) -> re.Pattern[str]:
    # Java's \w without UNICODE_CHARACTER_CLASS is ASCII: [a-zA-Z_0-9].
    return re.compile(f"[\\w{re.escape(special)}]+", re.ASCII)


_PATTERN_2 = _name_pattern(SPECIAL_CHARACTERS_2)
_PATTERN_4 = _name_pattern(SPECIAL_CHARACTERS_4)
_WORD_ONLY = _name_pattern("")


def is_valid_name(name: str, version: SchemaVersion, *, special_characters: bool = True) -> bool:
    """
    Hive's ``MetaStoreUtils.validateName(name, conf)`` for ``version``, exactly: the whole name (Java's
    ``Matcher.matches``) is word characters plus, when ``metastore.support.special.characters.tablename`` is on
    (``special_characters``, Hive's default), the version's special characters. HiveAlterHandler.alterTable applies it
    to the new table name (rule 2.3).
    """
    if not special_characters:
        pattern = _WORD_ONLY
    elif version.capabilities.special_characters_in_table_names:
        pattern = _PATTERN_4
    else:
        pattern = _PATTERN_2
    return pattern.fullmatch(name) is not None


def directory_name_problems(name: str) -> tuple[str, ...]:
    """
    Why ``name`` cannot safely be one directory under its parent (empty: it can). A name must be non-empty, have no
    control character (NUL included), no separator, no character a URI parser stops at or decodes, and must not be
    ``.`` or ``..``.
    """
    if not name:
        return ("it is empty",)
    problems = [reason for character, reason in _PATH_CHARACTERS.items() if character in name]
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        problems.append("it contains a control character")
    segments = re.split(r"[/\\]", name)
    problems += [_RELATIVE_NAMES[s] for s in dict.fromkeys(segments) if s in _RELATIVE_NAMES]
    if len(segments) > 1 and "" in segments:
        problems.append("it has an empty path segment")
    return tuple(problems)
