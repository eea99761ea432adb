"""11g lint rules that read a whole statement's tokens (``_lint`` runs them; README of the
rules there). Each returns what it saw, one text per violation.

Why tokens with parenthesis depth, not a parse tree: sqlglot accepts (and normalises away)
several of these forms in its Oracle dialect (``AS`` before a table alias, ``IF EXISTS``,
``SELECT`` without ``FROM``), so a tree would no longer show them; the depth tells a clause
of this query from one of a subquery or a function's arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from sqlglot.tokens import Token, TokenType  # type: ignore[attr-defined]  # re-exported

__all__ = ["RESERVED_WORDS", "STATEMENT_RULES", "WHOLE_STATEMENT_CHECKS"]

#: Oracle 11g reserved words (SQL Reference, "Oracle SQL Reserved Words").
_RESERVED_TEXT: Final = """
ACCESS ADD ALL ALTER AND ANY AS ASC AUDIT BETWEEN BY CHAR CHECK CLUSTER COLUMN COMMENT
COMPRESS CONNECT CREATE CURRENT DATE DECIMAL DEFAULT DELETE DESC DISTINCT DROP ELSE
EXCLUSIVE EXISTS FILE FLOAT FOR FROM GRANT GROUP HAVING IDENTIFIED IMMEDIATE IN INCREMENT
INDEX INITIAL INSERT INTEGER INTERSECT INTO IS LEVEL LIKE LOCK LONG MAXEXTENTS MINUS
MLSLABEL MODE MODIFY NOAUDIT NOCOMPRESS NOT NOWAIT NULL NUMBER OF OFFLINE ON ONLINE OPTION
OR ORDER PCTFREE PRIOR PRIVILEGES PUBLIC RAW RENAME RESOURCE REVOKE ROW ROWID ROWNUM ROWS
SELECT SESSION SET SHARE SIZE SMALLINT START SUCCESSFUL SYNONYM SYSDATE TABLE THEN TO
TRIGGER UID UNION UNIQUE UPDATE USER VALIDATE VALUES VARCHAR VARCHAR2 VIEW WHENEVER WHERE
WITH
"""
RESERVED_WORDS: Final = frozenset(_RESERVED_TEXT.split())

STATEMENT_RULES: Final = {
    "O11-IF-EXISTS": "IF [NOT] EXISTS is not Oracle 11g DDL; check the data dictionary",
    "O11-NO-FROM": "SELECT without FROM is 23ai; select FROM DUAL",
    "O11-12C-FUNCTION": "STANDARD_HASH, APPROX_* and MATCH_RECOGNIZE are 12c+",
    "O11-ON-OVERFLOW": "LISTAGG .. ON OVERFLOW is 12.2; keep the list under 4000 bytes",
    "O11-CONVERSION-ERROR": "DEFAULT .. ON CONVERSION ERROR is 12.2",
    "O11-COLLATE": "COLLATE is 12.2; sessions use NLS_SORT/NLS_COMP = BINARY",
    "O11-TABLE-AS": "AS before a table alias is not Oracle (ORA-00933)",
    "O11-MERGE-RETURNING": "MERGE .. RETURNING is not 11g; read the row after the MERGE",
    "O11-TRUNCATE-CASCADE": "TRUNCATE .. CASCADE is 12c",
    "O11-RESERVED-COLUMN": "a reserved word as a column name (ORA-00904)",
}

_QUOTED: Final = (TokenType.IDENTIFIER, TokenType.STRING)
_CLAUSE_END: Final = frozenset({
    "WHERE", "GROUP BY", "ORDER BY", "HAVING", "ON", "SET", "WHEN", "UNION", "INTERSECT",
    "MINUS", "CONNECT BY", "START", "FOR", "SELECT", "VALUES", "RETURNING", "PIVOT", "UNPIVOT",
    "LOG",
})  # fmt: skip
_SET_OPERATORS: Final = frozenset({"UNION", "INTERSECT", "MINUS", "EXCEPT"})
_NOT_COLUMNS: Final = frozenset({"CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"})
#: Reserved words that are valid after ``alias.`` (pseudo-columns).
_PSEUDO: Final = frozenset({"ROWID", "ROWNUM", "NEXTVAL", "CURRVAL"})


def _word(token: Token) -> str:
    return "" if token.token_type in _QUOTED else token.text.upper()


def _depths(tokens: Sequence[Token]) -> list[int]:
    """Parenthesis depth of each token (an opening parenthesis has its outer depth)."""
    depth, out = 0, []
    for token in tokens:
        if token.token_type is TokenType.R_PAREN:
            depth -= 1
        out.append(depth)
        if token.token_type is TokenType.L_PAREN:
            depth += 1
    return out


def _pairs(tokens: Sequence[Token]) -> list[str]:
    words = [_word(t) for t in tokens]
    seen = []
    for i, word in enumerate(words):
        after = words[i + 1] if i + 1 < len(words) else ""
        if word == "IF" and (after == "EXISTS" or words[i + 1 : i + 3] == ["NOT", "EXISTS"]):
            seen.append(("O11-IF-EXISTS", "IF [NOT] EXISTS"))
        elif word in ("STANDARD_HASH", "MATCH_RECOGNIZE") or (
            word.startswith("APPROX_") and after == "("
        ):
            seen.append(("O11-12C-FUNCTION", word))
        elif word == "ON" and after == "OVERFLOW":
            seen.append(("O11-ON-OVERFLOW", "ON OVERFLOW"))
        elif word == "ON" and after == "CONVERSION":
            seen.append(("O11-CONVERSION-ERROR", "ON CONVERSION ERROR"))
        elif word == "COLLATE":
            seen.append(("O11-COLLATE", "COLLATE"))
    return [f"{rule}\x00{text}" for rule, text in seen]


def _no_from(tokens: Sequence[Token]) -> list[str]:
    depths = _depths(tokens)
    found = []
    for i, token in enumerate(tokens):
        if _word(token) != "SELECT":
            continue
        for j in range(i + 1, len(tokens)):
            if depths[j] < depths[i] or (
                depths[j] == depths[i] and _word(tokens[j]) in _SET_OPERATORS
            ):
                break
            if depths[j] == depths[i] and _word(tokens[j]) == "FROM":
                break
        else:
            j = len(tokens)
        if j == len(tokens) or _word(tokens[j]) != "FROM":
            found.append("O11-NO-FROM\x00SELECT without FROM")
    return found


def _table_as(tokens: Sequence[Token]) -> list[str]:
    depths = _depths(tokens)
    first = _word(tokens[0]) if tokens else ""
    in_from: set[int] = set()
    found = []
    for i, token in enumerate(tokens):
        word, depth = _word(token), depths[i]
        in_from = {d for d in in_from if d <= depth}
        if (
            word in ("FROM", "JOIN", "USING")
            or (i == 0 and first == "UPDATE")
            or (word == "INTO" and first == "MERGE")
        ):
            in_from.add(depth)
        elif word in _CLAUSE_END:
            in_from.discard(depth)
        elif word == "AS" and depth in in_from:
            found.append("O11-TABLE-AS\x00AS before a table alias")
    return found


def _statement_words(tokens: Sequence[Token]) -> list[str]:
    words = [_word(t) for t in tokens]
    first = words[0] if words else ""
    found = []
    if first == "MERGE" and "RETURNING" in words:
        found.append("O11-MERGE-RETURNING\x00MERGE .. RETURNING")
    if first == "TRUNCATE" and "CASCADE" in words:
        found.append("O11-TRUNCATE-CASCADE\x00TRUNCATE .. CASCADE")
    return found


def _items(tokens: Sequence[Token], opening: int) -> list[int]:
    """First token of each top-level item of the parenthesised list opening at *opening*."""
    depths = _depths(tokens)
    starts = [opening + 1]
    for i in range(opening + 1, len(tokens)):
        if depths[i] <= depths[opening]:
            break  # its closing parenthesis
        if tokens[i].token_type is TokenType.COMMA and depths[i] == depths[opening] + 1:
            starts.append(i + 1)
    return starts


def _defined_columns(tokens: Sequence[Token]) -> list[int]:
    """Indexes of the tokens that name a column being defined or listed: CREATE TABLE and
    ALTER TABLE .. ADD items, INSERT column lists."""
    words = [_word(t) for t in tokens]
    starts: list[int] = []
    if words[:2] == ["CREATE", "TABLE"] or words[:1] == ["INSERT"]:
        opening = next((i for i, t in enumerate(tokens) if t.token_type is TokenType.L_PAREN), -1)
        if opening < 0 or (words[0] == "CREATE" and "AS" in words[:opening]):
            return []
        starts = _items(tokens, opening)
    elif words[:2] == ["ALTER", "TABLE"] and "ADD" in words:
        add = words.index("ADD") + 1
        paren = add < len(tokens) and tokens[add].token_type is TokenType.L_PAREN
        starts = _items(tokens, add) if paren else [add]
    return [i for i in starts if i < len(tokens) and words[i] not in _NOT_COLUMNS]


def _reserved_columns(tokens: Sequence[Token]) -> list[str]:
    found = [f"O11-RESERVED-COLUMN\x00column {_word(tokens[i])}"
             for i in _defined_columns(tokens) if _word(tokens[i]) in RESERVED_WORDS]  # fmt: skip
    for i in range(1, len(tokens)):
        word = _word(tokens[i])
        if tokens[i - 1].token_type is TokenType.DOT and word in RESERVED_WORDS - _PSEUDO:
            found.append(f"O11-RESERVED-COLUMN\x00column .{word}")
    return found


#: Whole-statement checks; each returns ``"RULE\x00what was seen"`` items.
WHOLE_STATEMENT_CHECKS: Final[tuple[Callable[[Sequence[Token]], list[str]], ...]] = (
    _pairs,
    _no_from,
    _table_as,
    _statement_words,
    _reserved_columns,
)
