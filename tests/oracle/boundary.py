"""What every recorded statement must satisfy at the driver boundary (used by the recorded
runs in ``test_boundary_*``)."""

from __future__ import annotations

from collections.abc import Iterable

from sqlglot.dialects.oracle import Oracle
from sqlglot.tokens import TokenType  # type: ignore[attr-defined]

from flightstate_oracle._lint import lint

__all__ = ["boundary_problems", "quoting_conflicts"]


def _names(text: str) -> tuple[set[str], set[str]]:
    """(quoted identifiers as written, unquoted identifiers as Oracle stores them), binds
    and string literals excluded."""
    quoted: set[str] = set()
    unquoted: set[str] = set()
    tokens = Oracle().tokenize(text)
    for i, token in enumerate(tokens):
        after_colon = i > 0 and tokens[i - 1].token_type is TokenType.COLON
        if token.token_type is TokenType.IDENTIFIER:
            quoted.add(token.text)
        elif token.token_type is TokenType.VAR and not after_colon:
            unquoted.add(token.text.upper())
    return quoted, unquoted


def quoting_conflicts(texts: Iterable[str]) -> set[str]:
    """Names used quoted (case kept, not all upper-case) in one statement and unquoted (so
    upper-case) in another: two different identifiers for Oracle (ORA-00904, ORA-00942)."""
    quoted: set[str] = set()
    unquoted: set[str] = set()
    for text in texts:
        q, u = _names(text)
        quoted |= q
        unquoted |= u
    return {name for name in quoted if name != name.upper() and name.upper() in unquoted}


def boundary_problems(texts: Iterable[str]) -> list[str]:
    """Every problem of the recorded texts: a trailing ``;``, an 11g rule broken, a quoting
    conflict (empty: clean)."""
    texts = list(dict.fromkeys(texts))
    problems = [f"ends in ';': {t[:80]}" for t in texts if t.rstrip().endswith(";")]
    for text in texts:
        problems += [f"{f.rule} {f.message}: {text[:80]}" for f in lint(text)]
    problems += [f"quoted and unquoted: {name}" for name in sorted(quoting_conflicts(texts))]
    return problems
