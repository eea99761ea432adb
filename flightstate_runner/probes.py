"""The inbox lag for status and metrics, over the backend's queries or a MySQL inbox.

The ports carry no "how far behind are we" query of the inbox, so the store packages and
``flightstate_mysql.probe`` answer it and this module turns their rows into ``InboxLag``.
An ``InboxProbe`` keeps its MySQL connection between calls (the runner's monitor probes
every 2 s; a connect per probe cost more CPU than everything else an idle runner did, and
PyMySQL's TLS-preferring connect holds the interpreter lock while it loads the CA bundle)
and drops it after a failure. Inbox timestamps are airport-local and zone-less
(docs/protocol.md §2),
so ages are computed in the airport zone.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from attrs import asdict, frozen

from flightstate_core.domain.errors import ConfigError
from flightstate_core.ports import InboxLagRows, OperatorQueries
from flightstate_runner.config import RunnerConfig

__all__ = ["HEARTBEAT_FRESH_S", "InboxLag", "InboxProbe", "ensure_runner_tables", "inbox_lag"]

# A runner writes its heartbeat every 2 s; one silent for this long has stopped or hung.
HEARTBEAT_FRESH_S = 10.0


@frozen
class InboxLag:
    """Rows after the cursor: how many, the head's id and age (seconds), the newest id."""

    lag: int
    head_id: int | None
    head_age_s: float | None
    last_id: int | None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


def _age(rows: InboxLagRows, inbox_tz: str) -> float | None:
    """The head's age in seconds: measured by the inbox server (its NOW minus the head's
    DATE_RECEIVED, one clock whatever its zone), or with a configured *inbox_tz*, from
    DATE_RECEIVED as wall time there (docs/design.md, "Operator view")."""
    received = rows.head_received
    if not isinstance(received, datetime):
        return None
    if inbox_tz:
        aware = received.replace(tzinfo=ZoneInfo(inbox_tz)) if received.tzinfo is None else received
        return max(0.0, (datetime.now(UTC) - aware).total_seconds())
    age = rows.head_server_age
    return None if age is None else max(0.0, float(age))


class InboxProbe:
    """The configured inbox's lag past a cursor: a MySQL inbox through
    ``flightstate_mysql.probe`` (one kept connection), else the store's inbox table."""

    def __init__(self, config: RunnerConfig, queries: OperatorQueries) -> None:
        self._config = config
        self._queries = queries
        self._mysql: Any = None

    def lag(self, cursor: int | None) -> InboxLag:
        """How far the inbox is ahead of *cursor* (rows with a greater CMINMSGS_ID)."""
        after = cursor or 0
        mysql = self._config.inbox_kind("status") == "mysql"
        rows = self._mysql_rows(after) if mysql else (
            self._queries.inbox_lag(self._config.inbox_table, after))  # fmt: skip
        return InboxLag(rows.count, rows.head_id, _age(rows, self._config.inbox_tz), rows.last_id)

    def _mysql_rows(self, after: int) -> InboxLagRows:
        from flightstate_mysql import probe  # noqa: PLC0415 - only with a MySQL inbox

        if self._mysql is None:
            self._mysql = probe.connect(str(self._config.mysql_dsn))
        try:
            return probe.inbox_lag(self._mysql, self._config.inbox_table, after)
        except Exception:
            self.close()  # a connection that failed is dropped; the next call connects
            raise

    def close(self) -> None:
        """Close the kept MySQL connection (idempotent)."""
        if self._mysql is not None:
            from flightstate_mysql import probe  # noqa: PLC0415

            probe.close_quietly(self._mysql)
            self._mysql = None


def inbox_lag(config: RunnerConfig, queries: OperatorQueries, cursor: int | None) -> InboxLag:
    """One lag probe with its own MySQL connection (``status``, the idle check)."""
    probe = InboxProbe(config, queries)
    try:
        return probe.lag(cursor)
    finally:
        probe.close()


def ensure_runner_tables(queries: OperatorQueries) -> None:
    """Check the runner's heartbeat and requeue-audit tables exist (``migrate`` adds them)."""
    missing = queries.runner_tables_missing()
    if missing:
        raise ConfigError(
            f"tables {', '.join(missing)} are missing: run `flightstate migrate` first"
        )
