"""Batch loading of full flight states: one query per table per batch, pipelined.

Why: a flight is a main row plus up to ten collections in nine tables. Joining them would
multiply rows (3 gates x 4 counters x 2 belts); a query per flight is N+1.
So each batch sends one query per table, all in one pipeline (one network round trip),
and assembles the states in Python. The caller decides the snapshot: the writer runs under
the pipeline lock (READ COMMITTED after the lock), readers in REPEATABLE READ READ ONLY.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any, Final

import psycopg

from flightstate_core.domain.catalog import COLLECTIONS
from flightstate_core.domain.items import Item
from flightstate_core.domain.state import FlightState
from flightstate_core.support.tuning import collector_paused
from flightstate_pg._rows import decode_details, decode_main
from flightstate_pg._schema import DETAILS, MAIN

__all__ = ["BY_FLIDS", "assemble", "codeshare_flids", "fetch_details", "fetch_states"]

Conn = psycopg.Connection[Any]

#: Loads of at least this many flights pause the cyclic collector (``collector_paused``).
_BULK_LOAD: Final = 200
#: (main WHERE, detail WHERE) for a list of FLIDs.
BY_FLIDS = ("WHERE FLID = ANY(%b)", "WHERE FLID = ANY(%b)")
# A flight is not its own codeshare.
_CODESHARES_OF = "SELECT FLID FROM FLIGHT_SCHD WHERE MAID = ANY(%b) AND MAID <> FLID ORDER BY FLID"


def fetch_states(conn: Conn, where: tuple[str, str], keys: Sequence[str]) -> dict[str, FlightState]:
    """Full states of the flights the WHERE pair selects (one pipeline, one query per table)."""
    if not keys:
        return {}
    params = (list(keys),)
    bulk = collector_paused() if len(keys) >= _BULK_LOAD else nullcontext()
    with bulk, conn.pipeline() as pipeline:
        main = conn.cursor()
        main.execute(MAIN.select + where[0], params)
        details = []
        for detail in DETAILS:
            cursor = conn.cursor()
            cursor.execute(detail.ordered(where[1]), params)
            details.append(cursor)
        pipeline.sync()
        main_rows = main.fetchall()
        # Each table is decoded as soon as its rows are in: the server runs the queries
        # after it meanwhile (a cold 2,000-flight load overlaps ~100 ms this way).
        items: dict[str, dict[str, list[Item]]] = {}
        for detail, cursor in zip(DETAILS, details, strict=True):
            decode_details(detail.table, cursor.fetchall(), items)
    return _states(main_rows, items)


def codeshare_flids(conn: Conn, masters: Sequence[str]) -> list[str]:
    """FLIDs of the flights whose MAID names one of ``masters`` (index on MAID).

    Only the keys: the caller loads the states through its cache, since most codeshares
    are flights the pump has just written (their masters change all day)."""
    if not masters:
        return []
    rows = conn.execute(_CODESHARES_OF, (list(masters),)).fetchall()
    return [row[0] for row in rows]


def fetch_details(conn: Conn, flids: Sequence[str]) -> list[list[Any]]:
    """Detail rows of these FLIDs, one query per table in one pipeline (``DETAILS`` order)."""
    with conn.pipeline() as pipeline:
        cursors = [conn.cursor() for _ in DETAILS]
        for cursor, detail in zip(cursors, DETAILS, strict=True):
            cursor.execute(detail.ordered(BY_FLIDS[1]), (list(flids),))
        pipeline.sync()
        return [cursor.fetchall() for cursor in cursors]


def assemble(
    main_rows: Sequence[Sequence[Any]], detail_rows: Sequence[Sequence[Sequence[Any]]]
) -> dict[str, FlightState]:
    """States from the rows of FLIGHT_SCHD and of each detail table (``DETAILS`` order)."""
    items: dict[str, dict[str, list[Item]]] = {}
    for detail, rows in zip(DETAILS, detail_rows, strict=True):
        decode_details(detail.table, rows, items)
    return _states(main_rows, items)


def _states(
    main_rows: Sequence[Sequence[Any]], items: dict[str, dict[str, list[Item]]]
) -> dict[str, FlightState]:
    states: dict[str, FlightState] = {}
    for row in main_rows:
        found = items.get(row[0])  # FLID
        collections = (
            {code: tuple(found[code]) for code in _catalog_order(found)} if found else None
        )
        state = decode_main(row, collections)
        states[state.flid] = state
    return states


_CATALOG_POSITION: Final = {code: at for at, code in enumerate(COLLECTIONS)}


def _catalog_order(found: dict[str, list[Item]]) -> list[str]:
    if len(found) == 1:
        return list(found)
    return sorted(found, key=_CATALOG_POSITION.__getitem__)
