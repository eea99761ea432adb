"""Who leads, seen from one runner: a log line on every change, and heartbeat fields.

The pump decides leadership (``flightstate_core.pump``); this only reports it, from the
runner's monitor thread (every couple of seconds), so the pure pump stays as it is.

- The leader notes when it took the lease (the first monitor round that sees a new epoch),
  logs ``leading (epoch E)`` and puts ``epoch``/``leader_since`` into its heartbeat.
- A standby reads the lease row; when its holder or epoch changes it logs
  ``standing by, leader is X since T`` (T from X's heartbeat, "unknown" if X is not a runner
  or has not reported yet), so a standby never waits silently.
- Holders are ``name#instance`` (``flightstate_core.engine.lease_identity``): when the leader has
  this runner's own name (another process started with the same ``--holder``, or this
  host's previous process whose lease has not expired yet), the standby says so at WARNING,
  once per change: two processes with one name usually mean a misconfiguration.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime

from flightstate_core.engine.lease_identity import instance_holder, split_holder
from flightstate_core.ports import OperatorQueries, RunnerLease

__all__ = ["LeadershipWatch"]


class LeadershipWatch:
    """Call ``observe(leading, epoch)`` from the monitor; read ``fields()`` for heartbeats."""

    def __init__(
        self,
        lease: RunnerLease,
        queries: OperatorQueries,
        holder: str,
        log: logging.Logger,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        *,
        instance: str,
    ) -> None:
        self._queries = queries  # own connection(s): the monitor thread's
        self._holder = holder
        self._instance = instance
        self._stored = instance_holder(holder, instance)  # as the lease row names us
        self._log = log
        self._clock = clock
        self._lease = lease  # own connection, same instance as the pump's
        self._led_epoch: int | None = None
        self._since: str | None = None
        self._seen: tuple[str | None, int] | None = None

    def observe(self, leading: bool, epoch: int | None) -> None:
        """Note this process's leadership; when standing by, who leads instead."""
        if leading and epoch is not None:
            if epoch != self._led_epoch:
                self._led_epoch, self._since = epoch, self._clock().isoformat()
                self._seen = (self._stored, epoch)
                self._log.info("leading (epoch %s)", epoch, extra={
                    "event": "leading", "holder": self._holder, "instance": self._instance,
                    "epoch": epoch})  # fmt: skip
            return
        self._led_epoch = self._since = None
        self._standing_by()

    def _standing_by(self) -> None:
        found = self._lease.status()
        if found is None:
            return
        epoch, holder, unexpired = found
        leader = holder if holder and unexpired and holder != self._stored else None
        if leader is None or (leader, epoch) == self._seen:
            return
        self._seen = (leader, epoch)
        since = self._queries.leader_since(leader, epoch)
        name, instance = split_holder(leader)
        extra = {"event": "standby", "holder": self._holder, "instance": self._instance,
                 "leader": name, "leader_instance": instance, "epoch": epoch,
                 "leader_since": since}  # fmt: skip
        if name == self._holder:
            self._log.warning(
                "standing by: another process with this runner's holder name %s leads "
                "(instance %s, epoch %s) since %s: a second runner started with the same "
                "--holder, or this one's previous process until its lease expires",
                name, instance, epoch, since or "unknown", extra=extra)  # fmt: skip
            return
        self._log.info("standing by, leader is %s since %s", name, since or "unknown",
                       extra=extra)  # fmt: skip

    def fields(self) -> dict[str, object]:
        """Heartbeat fields: the epoch this process leads at and since when (or None)."""
        return {"epoch": self._led_epoch, "leader_since": self._since}

    def close(self) -> None:
        """End the lease-reading and query connections."""
        self._lease.close()
        self._queries.close()
