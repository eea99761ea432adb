"""The first reads of a unit of work in one round trip (``ports.UnitReadAhead``).

Why: a unit starts with five small reads (processed ids, business duplicates, the flights'
stamps, codeshares of its masters, archived version floors). Each is a round trip, and in
the runner every round trip is also a moment another thread may take the interpreter
lock, so at a few messages per second they were a large part of a message's latency. Sent
as one statement after the lock (``_UNIT``), they cost one.

Each answer is kept for the exact question announced and given once (``take_*``); a call
with other arguments, or a second one, goes to the database as before. ``PgTransaction``
drops what is left at its first write, so nothing read here outlives a change this
transaction makes.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any, Final

import psycopg
from attrs import define

__all__ = ["UnitReads", "duplicate_rows", "read_unit"]

Conn = psycopg.Connection[Any]
DuplicateRows = dict[tuple[str, str], list[tuple[int, datetime | None]]]


def duplicate_rows(rows: Collection[Sequence[Any]]) -> DuplicateRows:
    """``find_duplicates``' answer from rows of (identity_key, digest, message id, DTTM)."""
    found: DuplicateRows = {}
    for key, digest, message_id, dttm in rows:
        found.setdefault((key, digest), []).append((int(message_id), dttm))
    return found


@define
class UnitReads:
    """What one statement read, each answer for the question it was read for, given once."""

    procs: tuple[frozenset[int], set[int]] | None
    duplicates: tuple[frozenset[tuple[str, str]], DuplicateRows] | None
    codeshares: tuple[frozenset[str], list[tuple[str, str]]] | None
    floors: tuple[frozenset[str], dict[str, int]] | None
    #: (FLID, STATE_VERSION, UPDATED_AT, LAST_MESSAGE_ID, octet_length(PROVENANCE)) of the
    #: probed FLIDs that exist (``_cache.STAMPS``).
    stamps: list[tuple[Any, ...]]

    def take_procs(self, asked: Collection[int]) -> set[int] | None:
        """``get_procs(asked)``, if that was read (once)."""
        read, self.procs = self.procs, None
        if read is None or not read[0].issuperset(asked):
            return None
        wanted = set(asked)
        return {mid for mid in read[1] if mid in wanted}

    def take_duplicates(self, asked: Collection[tuple[str, str]]) -> DuplicateRows | None:
        """``find_duplicates(asked)``, if that was read (once)."""
        read, self.duplicates = self.duplicates, None
        if read is None or not read[0].issuperset(asked):
            return None
        wanted = set(asked)
        return {key: pairs for key, pairs in read[1].items() if key in wanted}

    def take_codeshares(self, masters: Collection[str]) -> list[str] | None:
        """The FLIDs ``codeshare_flids(masters)`` would give, if that was read (once)."""
        read, self.codeshares = self.codeshares, None
        if read is None or not read[0].issuperset(masters):
            return None
        wanted = set(masters)
        return [flid for flid, master in read[1] if master in wanted]

    def take_floors(self, asked: Collection[str]) -> dict[str, int] | None:
        """``version_floors(asked)``, if that was read (once)."""
        read, self.floors = self.floors, None
        if read is None or not read[0].issuperset(asked):
            return None
        wanted = set(asked)
        return {flid: version for flid, version in read[1].items() if flid in wanted}


# One statement, not a pipeline: a pipeline leaves the server between its queries and its
# Sync, and a client frozen there keeps its transaction (and PIPELINE_LOCK) open with no
# server timeout to end it (idle_in_transaction_session_timeout starts only after Sync).
# One statement goes out in one write with its Sync. Each branch fills its own columns:
# (kind, text a, text b, bigint m, bigint v, timestamptz t); an empty array selects nothing.
_PROC, _DUPLICATE, _STAMP, _FLOOR = 1, 2, 3, 4  # the first column; 5: a codeshare
_UNIT: Final = (
    "SELECT 1, NULL::text, NULL::text, MESSAGE_ID, NULL::bigint, NULL::timestamptz "
    "FROM PROC_STATE WHERE MESSAGE_ID = ANY(%(ids)s::bigint[]) "
    "UNION ALL SELECT 2, IDENTITY_KEY, PAYLOAD_DIGEST, MESSAGE_ID, NULL, DTTM FROM PROC_STATE "
    "WHERE STATUS = 'SUCCEEDED' AND (IDENTITY_KEY, PAYLOAD_DIGEST) IN "
    "(SELECT * FROM unnest(%(keys)s::text[], %(digests)s::text[])) "
    "UNION ALL SELECT 3, FLID, octet_length(PROVENANCE)::text, LAST_MESSAGE_ID, STATE_VERSION, "
    "UPDATED_AT "
    "FROM FLIGHT_SCHD WHERE FLID = ANY(%(probe)s::text[]) "
    "UNION ALL SELECT 4, FLID, NULL, NULL, MAX(STATE_VERSION), NULL FROM FLIGHT_SCHD_HIST "
    "WHERE FLID = ANY(%(probe)s::text[]) GROUP BY FLID "
    "UNION ALL SELECT 5, FLID, MAID, NULL, NULL, NULL FROM FLIGHT_SCHD "
    "WHERE MAID = ANY(%(masters)s::text[]) AND MAID <> FLID"
)


def read_unit(
    conn: Conn,
    message_ids: Sequence[int],
    keys: Sequence[tuple[str, str]],
    probe: Sequence[str],
    masters: Sequence[str],
) -> UnitReads:
    """One statement (one round trip): the processed ids, duplicates, stamps of *probe*,
    codeshares of *masters* and archived floors of *probe*."""
    params = {
        "ids": list(message_ids),
        "keys": [k for k, _ in keys],
        "digests": [d for _, d in keys],
        "probe": list(probe),
        "masters": list(masters),
    }
    procs: set[int] = set()
    dups: list[tuple[Any, ...]] = []
    stamps: list[tuple[Any, ...]] = []
    floors: dict[str, int] = {}
    codeshares: list[tuple[str, str]] = []
    for kind, text_a, text_b, number, version, at in conn.execute(_UNIT, params):
        if kind == _PROC:
            procs.add(int(number))
        elif kind == _DUPLICATE:
            dups.append((text_a, text_b, number, at))
        elif kind == _STAMP:
            octets = None if text_b is None else int(text_b)  # PROVENANCE's length
            stamps.append((text_a, int(version), at, number, octets))
        elif kind == _FLOOR:
            floors[str(text_a)] = int(version)
        else:
            codeshares.append((str(text_a), str(text_b)))
    codeshares.sort()  # FLID order, as codeshare_flids gives them
    return UnitReads(
        procs=(frozenset(message_ids), procs),
        duplicates=(frozenset(keys), duplicate_rows(dups)),
        codeshares=(frozenset(masters), codeshares),
        floors=(frozenset(probe), floors),
        stamps=stamps,
    )
