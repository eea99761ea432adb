"""An Oracle 11g lint for SQL text: rejects 12c+ features and 11g limit violations.

Why token-based: several 12c constructs (``DEFAULT ON NULL``, ``GENERATED .. AS IDENTITY``)
do not even parse in sqlglot's Oracle dialect, and a parse tree would hide the exact words
that matter. The lint runs on sqlglot's Oracle tokens, so string literals and comments never
trigger a rule, and quoted identifiers are measured but not taken for keywords.

Rules (``RULES``):

- ``O11-IDENTITY``: identity columns (``GENERATED .. AS IDENTITY``, ``IDENTITY``) — 12c.
- ``O11-ROW-LIMIT``: ``FETCH FIRST/NEXT``, ``OFFSET n ROWS``, ``LIMIT`` — use ROWNUM.
- ``O11-JSON``: ``JSON_*()`` functions, ``IS [NOT] JSON``, the JSON type — 12c.
- ``O11-BOOLEAN``: the SQL ``BOOLEAN`` type and ``TRUE``/``FALSE`` literals — 23ai.
- ``O11-LENGTH``: ``VARCHAR2``/``VARCHAR`` over 4000 bytes, ``NVARCHAR2`` over 2000
  characters, ``CHAR``/``RAW`` over 2000; string lengths not in ``BYTE`` (CHAR semantics
  or NLS-dependent) are rejected too, since our limits are bytes.
- ``O11-LATERAL``: ``LATERAL`` inline views, ``CROSS APPLY``, ``OUTER APPLY`` — 12c.
- ``O11-DEFAULT``: ``DEFAULT ON NULL`` and ``DEFAULT seq.NEXTVAL`` — 12c.
- ``O11-IDENT-LEN``: identifiers and bind names over 30 bytes.
- ``O11-BIND-NAME``: bind names that are Oracle reserved words (ORA-01745).
- ``O11-PG``: PostgreSQL-isms that are not Oracle at all (``::`` casts, ``ON CONFLICT``,
  ``SERIAL``/``BIGSERIAL``, ``TEXT``/``JSONB``/``BYTEA``, ``ILIKE``).
- ``O11-SEMICOLON``: a statement passed to the driver must not end with ``;`` (ORA-00911).
- ``O11-TOKENS``: the text does not tokenize.
- Whole-statement rules (``_lint_clauses.STATEMENT_RULES``): ``IF [NOT] EXISTS``, SELECT
  without FROM, ``STANDARD_HASH``/``APPROX_*``/``MATCH_RECOGNIZE``, ``LISTAGG .. ON
  OVERFLOW``, ``ON CONVERSION ERROR``, ``COLLATE``, ``AS`` before a table alias, ``MERGE ..
  RETURNING``, ``TRUNCATE .. CASCADE``, reserved words as column names.
- Rules on column types (``_lint_types.TYPE_RULES``, with a catalog, by default the
  backend's tables): a LOB compared/sorted/grouped/DISTINCT or in a key or index, TIMESTAMP
  WITH TIME ZONE in a key, GROUP BY on a select-list alias.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from attrs import frozen
from sqlglot.dialects.oracle import Oracle
from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType  # type: ignore[attr-defined]  # re-exported

from flightstate_oracle._lint_clauses import (
    RESERVED_WORDS,
    STATEMENT_RULES,
    WHOLE_STATEMENT_CHECKS,
)
from flightstate_oracle._lint_types import TYPE_RULES, Catalog, type_findings

__all__ = ["RESERVED_WORDS", "RULES", "Finding", "LintError", "check", "identifier_problem", "lint"]

MAX_IDENTIFIER_BYTES: Final = 30

RULES: Final = {
    "O11-IDENTITY": "identity columns are Oracle 12c+; use a sequence",
    "O11-ROW-LIMIT": "FETCH FIRST/OFFSET/LIMIT are not 11g; page with ROWNUM",
    "O11-JSON": "SQL/JSON functions, IS JSON and the JSON type are 12c+",
    "O11-BOOLEAN": "SQL BOOLEAN is not in 11g; use NUMBER(1) or CHAR(1)",
    "O11-LENGTH": "string length over the 11g limit, or not declared in BYTE",
    "O11-LATERAL": "LATERAL / CROSS APPLY / OUTER APPLY are 12c+",
    "O11-DEFAULT": "DEFAULT ON NULL and sequence defaults are 12c+",
    "O11-IDENT-LEN": "identifier longer than 30 bytes",
    "O11-BIND-NAME": "bind name is an Oracle reserved word",
    "O11-PG": "PostgreSQL syntax that Oracle does not have",
    "O11-SEMICOLON": "statement ends with ';' (the driver rejects it)",
    "O11-TOKENS": "SQL text does not tokenize",
    **STATEMENT_RULES,
    **TYPE_RULES,
}

_LENGTH_LIMITS: Final = {
    "VARCHAR2": 4000,
    "VARCHAR": 4000,
    "NVARCHAR2": 2000,
    "CHAR": 2000,
    "NCHAR": 1000,
    "RAW": 2000,
}
_BYTE_SEMANTICS: Final = frozenset({"VARCHAR2", "VARCHAR", "CHAR"})
_PG_TYPES: Final = frozenset(
    {"SERIAL", "BIGSERIAL", "SMALLSERIAL", "TEXT", "JSONB", "BYTEA", "ILIKE"}
)


@frozen
class Finding:
    """One rule violation: the rule id and what was seen."""

    rule: str
    message: str


class LintError(ValueError):
    """A statement is not valid Oracle 11g SQL for flightstate."""

    def __init__(self, sql: str, findings: Sequence[Finding]) -> None:
        listed = "; ".join(f"{f.rule}: {f.message}" for f in findings)
        super().__init__(f"{listed} in: {sql[:200]}")
        self.findings = tuple(findings)


def _word(token: Token | None) -> str:
    """Upper-case text of a non-quoted token ('' for quoted identifiers and strings)."""
    if token is None or token.token_type in (TokenType.IDENTIFIER, TokenType.STRING):
        return ""
    return token.text.upper()


def _at(tokens: Sequence[Token], i: int) -> str:
    return _word(tokens[i]) if 0 <= i < len(tokens) else ""


def identifier_problem(name: str) -> str | None:
    """Why ``name`` cannot be an unquoted 11g identifier, or None."""
    if len(name.encode("utf-8")) > MAX_IDENTIFIER_BYTES:
        return f"{name!r} is {len(name.encode('utf-8'))} bytes (max {MAX_IDENTIFIER_BYTES})"
    if name.upper() in RESERVED_WORDS:
        return f"{name!r} is a reserved word"
    return None


def _identity(t: Sequence[Token], i: int) -> str | None:
    return "IDENTITY column" if _at(t, i) == "IDENTITY" else None


def _row_limit(t: Sequence[Token], i: int) -> str | None:
    word = _at(t, i)
    if word == "FETCH" and _at(t, i + 1) in ("FIRST", "NEXT"):
        return f"FETCH {_at(t, i + 1)}"
    if word in {"OFFSET", "LIMIT"}:
        return word
    return None


def _json(t: Sequence[Token], i: int) -> str | None:
    word = _at(t, i)
    if word == "JSON":
        return "JSON (IS JSON / JSON type)"
    if word.startswith("JSON_") and _at(t, i + 1) == "(":
        return f"{word}()"
    return None


def _boolean(t: Sequence[Token], i: int) -> str | None:
    word = _at(t, i)
    return word if word in ("BOOLEAN", "TRUE", "FALSE") else None


def _length(t: Sequence[Token], i: int) -> str | None:
    word = _at(t, i)
    if word not in _LENGTH_LIMITS or _at(t, i + 1) != "(":
        return None
    size_token = t[i + 2] if i + 2 < len(t) else None
    if size_token is None or size_token.token_type is not TokenType.NUMBER:
        return f"{word} without a numeric length"
    size, unit = int(size_token.text), _at(t, i + 3)
    if size > _LENGTH_LIMITS[word]:
        return f"{word}({size}) exceeds {_LENGTH_LIMITS[word]}"
    if word in _BYTE_SEMANTICS and unit != "BYTE":
        return f"{word}({size}{' ' + unit if unit != ')' else ''}) is not declared in BYTE"
    return None


def _lateral(t: Sequence[Token], i: int) -> str | None:
    word = _at(t, i)
    if word == "LATERAL":
        return word
    if word in ("CROSS", "OUTER") and _at(t, i + 1) == "APPLY":
        return f"{word} APPLY"
    return None


def _default(t: Sequence[Token], i: int) -> str | None:
    if _at(t, i) != "DEFAULT":
        return None
    if _at(t, i + 1) == "ON" and _at(t, i + 2) == "NULL":
        return "DEFAULT ON NULL"
    if _at(t, i + 2) == "." and _at(t, i + 3) in ("NEXTVAL", "CURRVAL"):
        return f"DEFAULT {_at(t, i + 1)}.{_at(t, i + 3)}"
    return None


def _ident_len(t: Sequence[Token], i: int) -> str | None:
    token = t[i]
    if token.token_type is TokenType.STRING:
        return None
    size = len(token.text.encode("utf-8"))
    if size > MAX_IDENTIFIER_BYTES:
        return f"{token.text!r} is {size} bytes"
    return None


def _bind_name(t: Sequence[Token], i: int) -> str | None:
    if _at(t, i) != ":" or i + 1 >= len(t):
        return None
    name = t[i + 1].text.upper()
    return f":{name}" if name in RESERVED_WORDS else None


def _pg(t: Sequence[Token], i: int) -> str | None:
    word = _at(t, i)
    if word == "::" or (word == ":" and _at(t, i + 1) == ":"):
        return ":: cast"
    if word == "ON" and _at(t, i + 1) == "CONFLICT":
        return "ON CONFLICT"
    return word if word in _PG_TYPES else None


_CHECKS: Final[tuple[tuple[str, Callable[[Sequence[Token], int], str | None]], ...]] = (
    ("O11-IDENTITY", _identity),
    ("O11-ROW-LIMIT", _row_limit),
    ("O11-JSON", _json),
    ("O11-BOOLEAN", _boolean),
    ("O11-LENGTH", _length),
    ("O11-LATERAL", _lateral),
    ("O11-DEFAULT", _default),
    ("O11-IDENT-LEN", _ident_len),
    ("O11-BIND-NAME", _bind_name),
    ("O11-PG", _pg),
)


def lint(sql: str, catalog: Catalog | None = None) -> list[Finding]:
    """Every 11g rule violation in one SQL statement (empty list: clean); ``catalog`` gives
    column types (default: the backend's tables)."""
    findings: list[Finding] = []
    if sql.rstrip().endswith(";"):
        findings.append(Finding("O11-SEMICOLON", "trailing ';'"))
    try:
        tokens = Oracle().tokenize(sql)
    except TokenError as exc:
        return [*findings, Finding("O11-TOKENS", str(exc)[:200])]
    for i in range(len(tokens)):
        for rule, check_at in _CHECKS:
            seen = check_at(tokens, i)
            if seen is not None:
                findings.append(Finding(rule, seen))
    for whole in WHOLE_STATEMENT_CHECKS:
        for item in whole(tokens):
            rule, _, seen = item.partition("\x00")
            findings.append(Finding(rule, seen))
    findings += [Finding(rule, seen) for rule, seen in type_findings(sql, catalog)]
    return findings


def check(sql: str) -> None:
    """Raise ``LintError`` if ``sql`` breaks any rule."""
    findings = lint(sql)
    if findings:
        raise LintError(sql, findings)
