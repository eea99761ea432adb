"""The Oracle contract suites' cleanup (tests/oracle/conftest.py) is derived from the
migrations: it empties every table they create (INBOX_GAP included), children before their
parents, and resets exactly the tables a migration seeds. Runs without a server; the suites
that use it run only with ``FLIGHTSTATE_TEST_ORACLE_DSN`` (SKIPPED otherwise)."""

from __future__ import annotations

import re

from flightstate_oracle._steps import load_migrations
from tests.oracle.conftest import CLEAN, RESET, created_tables

_REFERENCES = re.compile(r"^CREATE TABLE (\w+).*?REFERENCES (\w+)", re.S)
_SEEDS = re.compile(r"^INSERT INTO (\w+)")
_TABLE = re.compile(r"^(?:DELETE FROM|UPDATE) (\w+)")


def _table(statement: str) -> str:
    found = _TABLE.match(statement)
    assert found is not None, statement
    return found.group(1)


def _apply_texts() -> list[str]:
    return [s.apply for m in load_migrations() for s in m.steps if s.apply]


def test_every_created_table_is_emptied_or_reset() -> None:
    touched = {_table(text) for text in CLEAN}
    assert touched == set(created_tables())
    assert "INBOX_GAP" in touched
    assert "OUTBOX_PARKED" in touched
    assert "SCHEMA_MIGRATION" not in touched  # the runner's own table stays


def test_children_are_emptied_before_their_parents() -> None:
    order = [_table(text) for text in CLEAN]
    pairs = [m.groups() for t in _apply_texts() if (m := _REFERENCES.match(t))]
    assert pairs
    for child, parent in pairs:
        assert order.index(child) < order.index(parent), (child, parent)


def test_exactly_the_seeded_tables_are_reset() -> None:
    seeded = {m.group(1) for t in _apply_texts() if (m := _SEEDS.match(t))}
    assert seeded == set(RESET)
