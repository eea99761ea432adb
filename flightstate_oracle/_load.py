"""Batch loading of full flight states: one query per table per chunk of FLIDs.

Why: joining the nine detail tables would multiply rows, a query per flight is N+1. Each
chunk of at most ``IN_LIST_SIZE`` FLIDs sends one query per table with a fixed-size IN list
(unused binds are NULL, which matches nothing), so the statement text never varies and the
1000-expression IN limit is never reached. The caller decides the snapshot.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

import oracledb

from flightstate_core.domain.layout import DETAIL_TABLES
from flightstate_core.domain.state import FlightState
from flightstate_oracle import _sql as sql
from flightstate_oracle._db import query
from flightstate_oracle._rows import flight_from_rows

__all__ = ["chunked", "codeshare_flids", "fetch_states", "in_params"]

T = TypeVar("T")


def in_params(keys: Sequence[object], prefix: str = "F") -> dict[str, object]:
    """Binds of the fixed-size IN list for at most ``IN_LIST_SIZE`` keys."""
    if len(keys) > sql.IN_LIST_SIZE:
        raise ValueError(f"at most {sql.IN_LIST_SIZE} keys per IN list")
    names = sql.in_list_binds(prefix)
    return {name: (keys[i] if i < len(keys) else None) for i, name in enumerate(names)}


def chunked(keys: Iterable[T]) -> list[list[T]]:
    """Distinct ``keys`` (first occurrence order) in chunks of at most ``IN_LIST_SIZE``."""
    unique = list(dict.fromkeys(keys))
    size = sql.IN_LIST_SIZE
    return [unique[i : i + size] for i in range(0, len(unique), size)]


def _chunks(keys: Sequence[str]) -> list[list[str]]:
    return chunked(key for key in keys if key)  # "" is NULL in Oracle: no such FLID


def fetch_states(conn: oracledb.Connection, flids: Sequence[str]) -> dict[str, FlightState]:
    """Full states of these FLIDs (missing ones are absent)."""
    found: dict[str, FlightState] = {}
    for chunk in _chunks(flids):
        mains = query(conn, sql.FLIGHT_SELECT, in_params(chunk))
        if not mains:
            continue
        params = in_params([str(row["FLID"]) for row in mains])
        details: dict[str, dict[str, list[dict[str, object]]]] = {}
        for name in DETAIL_TABLES:
            for row in query(conn, sql.DETAIL_SELECT[name], params):
                details.setdefault(str(row["FLID"]), {}).setdefault(name, []).append(row)
        for main in mains:
            flid = str(main["FLID"])
            found[flid] = flight_from_rows(main, details.get(flid, {}))
    return found


def codeshare_flids(conn: oracledb.Connection, masters: Sequence[str]) -> list[str]:
    """FLIDs of the flights whose MAID names one of ``masters``."""
    out: list[str] = []
    for chunk in _chunks(masters):
        out += [str(row["FLID"]) for row in query(conn, sql.CODESHARE_SELECT, in_params(chunk))]
    return out
