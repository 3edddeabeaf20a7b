"""
Parse Hive's access-control statements (HiveParser.g: ``grantPrivileges``, ``revokePrivileges``,
``createRoleStatement``, ``dropRoleStatement``, ``grantRole``, ``revokeRole``)
into a :class:`~operations.privilege_specs.PrivilegeSpec`.

What SQL-standard authorization refuses is refused here, with its words: privileges other than SELECT, INSERT, UPDATE,
DELETE and ALL ("Privilege: X is not supported in sql standard authorization mode", ``SQLAuthorizationUtils
.validatePrivileges``), privileges on columns ("Privileges on columns not supported currently in sql standard
authorization mode", ``SQLAuthorizationUtils.getThriftPrivilegesBag``, 2.3 to 4.0: so nothing is written to
TBL_COL_PRIVS), and the reserved role names ALL, DEFAULT and NONE (``SQLStdHiveAccessController.createRole``).
Role names are kept in lower case, as SQL-standard authorization compares them (``SQLStdHiveAccessControllerWrapper``);
user and group names as typed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from operations.ddl.errors import DdlParseError
from operations.privilege_specs import Principal, PrivilegeSpec

__all__ = ("is_privilege_statement", "parse_privilege")

# Every privilege name HiveParser.g's privilegeType knows; only the SQL-standard ones are accepted.
GRAMMAR_PRIVILEGES = (
    "ALL",
    "ALTER",
    "UPDATE",
    "CREATE",
    "DROP",
    "INDEX",
    "LOCK",
    "SELECT",
    "SHOW_DATABASE",
    "INSERT",
    "DELETE",
)
SQL_STD = ("SELECT", "INSERT", "UPDATE", "DELETE", "ALL")
RESERVED_ROLES = ("ALL", "DEFAULT", "NONE")
_TOKEN = re.compile(r"\s*(?:(`(?:[^`]|``)+`)|([A-Za-z0-9_$.]+|'(?:[^'\\]|\\.)*')|([,();=]))")
_LEADS = (("GRANT",), ("REVOKE",), ("CREATE", "ROLE"), ("DROP", "ROLE"))


@dataclass(frozen=True)
class _Token:
    text: str
    value: str  # a word upper-cased for keywords is compared via .upper(); identifiers keep their case
    position: int
    quoted: bool = False


def is_privilege_statement(statement: str) -> bool:
    """Whether ``statement`` starts like one of the access-control statements (GRANT, REVOKE, CREATE/DROP ROLE)."""
    words = statement.strip().split(None, 2)
    upper = tuple(w.upper() for w in words[:2])
    return any(upper[: len(lead)] == lead for lead in _LEADS)


def parse_privilege(statement: str, *, default_database: str = "default") -> PrivilegeSpec:
    """The spec of one access-control statement; a :class:`DdlParseError` naming the position and problem otherwise."""
    return _Parser(statement, default_database).statement()


class _Parser:
    def __init__(self, text: str, default_database: str) -> None:
        self.text = text
        self.default_database = default_database
        self.tokens = self._tokenize(text)
        self.i = 0

    def _tokenize(self, text: str) -> list[_Token]:
        tokens, position = [], 0
        while position < len(text.rstrip()):
            match = _TOKEN.match(text, position)
            if match is None or match.end() == position:
                start = len(text) - len(text[position:].lstrip())
                raise DdlParseError(text, start, f"unexpected character {text[start]!r}")
            quoted, word, op = match.groups()
            start = match.start(1) if quoted else match.start(2) if word else match.start(3)
            if quoted:
                tokens.append(_Token(quoted, quoted[1:-1].replace("``", "`"), start, True))
            else:
                tokens.append(_Token(word or op, word or op, start))
            position = match.end()
        return tokens

    # Helpers ------------------------------------------------------------------------------------------------------

    def peek(self, ahead: int = 0) -> str:
        index = self.i + ahead
        if index >= len(self.tokens):
            return ""
        token = self.tokens[index]
        return "" if token.quoted else token.text.upper()

    def position(self) -> int:
        return self.tokens[self.i].position if self.i < len(self.tokens) else len(self.text.rstrip())

    def error(self, problem: str) -> DdlParseError:
        return DdlParseError(self.text, self.position(), problem)

    def accept(self, *words: str) -> bool:
        if all(self.peek(k) == w for k, w in enumerate(words)):
            self.i += len(words)
            return True
        return False

    def expect(self, *words: str) -> None:
        if not self.accept(*words):
            found = self.tokens[self.i].text if self.i < len(self.tokens) else "the end of the statement"
            raise self.error(f"expected {' '.join(words)}, found {found}")

    def identifier(self, what: str) -> str:
        if self.i >= len(self.tokens) or self.tokens[self.i].text in ",();=" or self.tokens[self.i].text[0] == "'":
            raise self.error(f"expected {what}")
        token = self.tokens[self.i]
        self.i += 1
        if not token.value or "." in token.value and not token.quoted and what != "a table name":
            raise DdlParseError(self.text, token.position, f"{token.text} is not a valid {what}")
        return token.value

    # Grammar ------------------------------------------------------------------------------------------------------

    def statement(self) -> PrivilegeSpec:
        if not self.tokens:
            raise self.error("the statement is empty; expected GRANT, REVOKE, CREATE ROLE or DROP ROLE")
        if self.accept("CREATE", "ROLE") or self.accept("DROP", "ROLE"):
            action = "create_role" if self.tokens[self.i - 2].text.upper() == "CREATE" else "drop_role"
            spec = PrivilegeSpec(action=action, roles=(self.role_name(reserved=action == "create_role"),))
        elif self.accept("GRANT"):
            spec = self.grant()
        elif self.accept("REVOKE"):
            spec = self.revoke()
        else:
            raise self.error("expected GRANT, REVOKE, CREATE ROLE or DROP ROLE")
        self.accept(";")
        if self.i < len(self.tokens):
            raise self.error(f"unexpected {self.tokens[self.i].text} after the end of the statement")
        return spec

    def grant(self) -> PrivilegeSpec:
        if self.is_role_statement():
            self.accept("ROLE")
            roles = self.role_names()
            self.expect("TO")
            principals = self.principals()
            option = self.accept("WITH", "ADMIN", "OPTION")
            return PrivilegeSpec(action="grant_role", roles=roles, principals=principals, option=option)
        privileges, columns = self.privilege_list()
        database, table = self.privilege_object()
        self.expect("TO")
        principals = self.principals()
        option = self.accept("WITH", "GRANT", "OPTION")
        return PrivilegeSpec("grant", privileges, database, table, principals, option=option, columns=columns)

    def revoke(self) -> PrivilegeSpec:
        if self.accept("ADMIN", "OPTION", "FOR"):
            self.accept("ROLE")
            return self.revoke_role(option=True)
        option = self.accept("GRANT", "OPTION", "FOR")
        if not option and self.is_role_statement():
            self.accept("ROLE")
            return self.revoke_role(option=False)
        privileges, columns = self.privilege_list()
        database, table = self.privilege_object()
        self.expect("FROM")
        principals = self.principals()
        return PrivilegeSpec("revoke", privileges, database, table, principals, option=option, columns=columns)

    def revoke_role(self, *, option: bool) -> PrivilegeSpec:
        roles = self.role_names()
        self.expect("FROM")
        return PrivilegeSpec(action="revoke_role", roles=roles, principals=self.principals(), option=option)

    def is_role_statement(self) -> bool:
        """GRANT/REVOKE of roles: ``ROLE`` follows, or no ``ON`` comes before TO/FROM (HiveParser's grantRole)."""
        if self.peek() == "ROLE":
            return True
        words = [t.text.upper() for t in self.tokens[self.i :] if not t.quoted]
        stop = next((k for k, w in enumerate(words) if w in ("TO", "FROM")), len(words))
        return "ON" not in words[:stop]

    def privilege_list(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        names: list[str] = []
        columns: tuple[str, ...] = ()
        while True:
            start = self.position()
            word = self.peek()
            if word not in GRAMMAR_PRIVILEGES:
                raise self.error(f"expected a privilege ({', '.join(SQL_STD)}), found {word or 'nothing'}")
            if word not in SQL_STD:
                raise DdlParseError(
                    self.text, start, f"Privilege: {word} is not supported in sql standard authorization mode"
                )
            self.i += 1
            if self.accept("("):
                columns = self.column_names()
                raise DdlParseError(
                    self.text,
                    start,
                    f"Privileges on columns ({', '.join(columns)}) not supported currently in sql standard "
                    "authorization mode: Hive writes no TBL_COL_PRIVS row for them",
                )
            if word not in names:
                names.append(word)
            if not self.accept(","):
                return tuple(names), columns

    def column_names(self) -> tuple[str, ...]:
        columns = [self.identifier("a column name").lower()]
        while self.accept(","):
            columns.append(self.identifier("a column name").lower())
        self.expect(")")
        return tuple(columns)

    def privilege_object(self) -> tuple[str, str]:
        self.expect("ON")
        if self.accept("DATABASE") or self.accept("SCHEMA"):
            return self.identifier("a database name").lower(), ""
        self.accept("TABLE")
        start = self.position()
        name = self.identifier("a table name").lower()
        if self.peek() == "PARTITION":
            raise self.error("privileges on partitions are not supported in sql standard authorization mode")
        database, _, table = name.rpartition(".")
        if not table or "." in database:
            raise DdlParseError(self.text, start, f"{name} is not a valid table name")
        return database or self.default_database, table

    def principals(self) -> tuple[Principal, ...]:
        found: list[Principal] = []
        while True:
            kind = self.peek()
            if kind not in ("USER", "GROUP", "ROLE"):
                raise self.error("expected USER, GROUP or ROLE and a name")
            self.i += 1
            name = self.identifier(f"a {kind.lower()} name")
            principal = Principal(kind, name.lower() if kind == "ROLE" else name)
            if principal not in found:
                found.append(principal)
            if not self.accept(","):
                return tuple(found)

    def role_names(self) -> tuple[str, ...]:
        roles = [self.role_name()]
        while self.accept(","):
            roles.append(self.role_name())
        return tuple(dict.fromkeys(roles))

    def role_name(self, *, reserved: bool = False) -> str:
        start = self.position()
        name = self.identifier("a role name")
        if reserved and name.strip().upper() in RESERVED_ROLES:
            raise DdlParseError(
                self.text, start, f"Role name cannot be one of the reserved roles: [{', '.join(RESERVED_ROLES)}]"
            )
        return name.lower()
