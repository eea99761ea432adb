"""The AODB side of ``bench_latency.py``: FLOPs to new flights, committed into cminmsgs at a
steady arrival rate or as one burst."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import pymysql
from latency_table import due_count

from flightstate_mysql import insert_messages, parse_mysql_dsn
from flightstate_testing.traffic import TrafficGenerator

__all__ = ["Flops", "Writer"]


class Flops:
    """FLOPs (ESTT) to flights never used before in this run: one ``schd`` record each."""

    def __init__(self) -> None:
        self._gen = TrafficGenerator(seed=21)
        self._next = 900_000

    def take(self, count: int) -> list[str]:
        """*count* messages to *count* new FLIDs."""
        first, self._next = self._next, self._next + count
        return [self._gen.estimate_flop(f) for f in range(first, first + count)]


class Writer:
    """The AODB side: inserts into cminmsgs and notes when each row's commit returned."""

    def __init__(self, dsn: str) -> None:
        self._conn: Any = pymysql.connect(autocommit=False, **parse_mysql_dsn(dsn))
        self.commits = 0

    def commit(self, raws: Sequence[str]) -> tuple[list[int], float]:
        """One transaction of *raws* (one multi-row INSERT, as the AODB helper writes them);
        their ids and the time its commit returned."""
        ids = insert_messages(self._conn, raws, chunk=max(1, len(raws)))
        at = time.time()
        self.commits += 1
        return ids, at

    def steady(self, raws: Sequence[str], rate: float) -> dict[int, float]:
        """Commit *raws* at *rate* msg/s (each message due at k / rate); id → commit time."""
        sent: dict[int, float] = {}
        start, done = time.time(), 0
        while done < len(raws):
            now = time.time()
            due = due_count(now - start, rate, len(raws))
            if due > done:
                ids, at = self.commit(raws[done:due])
                sent.update(dict.fromkeys(ids, at))
                done = due
            else:
                time.sleep(max(0.0, start + done / rate - now))
        return sent

    def close(self) -> None:
        """End the connection."""
        self._conn.close()
