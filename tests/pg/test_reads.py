"""Reads: one query per table per batch (no N+1), one snapshot per page."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import attrs
import psycopg
import pytest

from flightstate_core.testing.store_contract import flight, full_collections, processed
from flightstate_pg import PgStore

pytestmark = pytest.mark.pg


class _Counting:
    """A connection source that counts SELECTs and can act after the first FLIGHT_SCHD one."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.selects: list[str] = []
        self.after_main: Any = None

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        source = self

        class Cursor(psycopg.Cursor[Any]):
            def execute(self, query: Any, params: Any = None, **kw: Any) -> Any:
                result = super().execute(query, params, **kw)
                text = str(query)
                if text.startswith("SELECT"):
                    source.selects.append(text)
                    if "FROM FLIGHT_SCHD" in text and source.after_main is not None:
                        hook, source.after_main = source.after_main, None
                        hook()
                return result

        with psycopg.connect(self.dsn, autocommit=True, cursor_factory=Cursor) as conn:
            yield conn


def _seed(dsn: str, count: int) -> list[Any]:
    store = PgStore(dsn)
    states = [flight(f"F{n:03d}", collections=full_collections(3)) for n in range(count)]
    with store.transaction() as tx:
        tx.lock_pipeline(0)
        tx.save(processed(1, *states))
    store.close()
    return states


def test_no_n_plus_one(fresh_pg: str) -> None:
    states = _seed(fresh_pg, 120)
    source = _Counting(fresh_pg)
    store = PgStore(source)
    assert store.get_flights([s.flid for s in states]) == {s.flid: s for s in states}
    assert len(source.selects) == 10  # FLIGHT_SCHD + 9 detail tables, whatever the count
    source.selects.clear()
    assert list(store.iter_flights(page_size=50)) == states
    assert len(source.selects) == 3 * 10 + 1  # 3 pages of 10 queries, 1 empty page


def test_a_page_is_one_snapshot(fresh_pg: str) -> None:
    states = _seed(fresh_pg, 3)
    source = _Counting(fresh_pg)

    def concurrent_write() -> None:  # commits between the page's main and detail queries
        writer = PgStore(fresh_pg)
        gates = states[0].collections["GTDT"][:1]
        changed = attrs.evolve(states[0], version=2, collections={"GTDT": gates})
        with writer.transaction() as tx:
            tx.lock_pipeline(0)
            tx.load_flights([changed.flid])
            tx.save(processed(2, changed))
        writer.close()

    source.after_main = concurrent_write
    assert list(PgStore(source).iter_flights(page_size=10)) == states  # the old snapshot
    check = PgStore(fresh_pg)
    assert check.get_flights(["F000"])["F000"].version == 2  # the write did commit
    check.close()
