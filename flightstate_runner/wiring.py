"""Composition: build the adapters of one runner process from a ``RunnerConfig``.

The store is a ``StoreBackend`` (``flightstate_core.ports``) chosen by the store DSN's
scheme (``backends``): this module names no store package and no driver. Nothing connects
when it is imported or constructed: connections open on first use (every adapter
reconnects by itself after a failure). ``open_services`` checks once that ``migrate`` has
run, so an operator reads "run migrate first".
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from attrs import define, field

from flightstate_core.domain.errors import ConfigError, PermanentError
from flightstate_core.engine.budget import ReadBudget
from flightstate_core.engine.lease_identity import instance_holder, new_instance
from flightstate_core.engine.processor import ServiceProcessor
from flightstate_core.ports import (
    BackendSettings,
    Inbox,
    Outbox,
    RunnerLease,
    RunnerStore,
    SessionWaits,
    StoreBackend,
)
from flightstate_core.pump import Backoff, Pump, PumpSettings
from flightstate_runner.backends import open_backend
from flightstate_runner.config import RunnerConfig
from flightstate_runner.metrics import RunnerMetrics
from flightstate_runner.observe import MetricsObserver, ObservedProcessor

if TYPE_CHECKING:  # Kafka is optional: imported where a dispatcher is built
    from flightstate_kafka import Dispatcher

__all__ = [
    "Services",
    "backend_for",
    "build_dispatcher",
    "build_pump",
    "kafka_settings",
    "open_services",
    "provision",
    "read_budget",
    "require",
    "require_schema",
    "require_store",
]


def require(config: RunnerConfig, name: str, command: str) -> str:
    """The value of a mandatory setting, or ConfigError naming it (exit code 2)."""
    value = getattr(config, name)
    if not value:
        raise ConfigError(
            f"{name}: `{command}` needs FLIGHTSTATE_{name.upper()} (or --{name.replace('_', '-')})"
        )
    return str(value)


def require_store(config: RunnerConfig, command: str) -> str:
    """The store DSN (``store_dsn``, else its alias ``pg_dsn``), or ConfigError naming both."""
    dsn = config.store()
    if not dsn:
        raise ConfigError(
            f"store_dsn: `{command}` needs FLIGHTSTATE_STORE_DSN (or --store-dsn), or its "
            "PostgreSQL alias pg_dsn (FLIGHTSTATE_PG_DSN, --pg-dsn)"
        )
    return dsn


def backend_for(
    config: RunnerConfig, command: str, *, instance: str | None = None, dsn: str | None = None
) -> StoreBackend:
    """The store backend of the configured DSN (or *dsn*). With *instance* (a process that
    may lead: ``run``, ``requeue``) its sessions carry the bounded waits and the lease
    holder ``name#instance`` (a standby then ends that instance's sessions only); an
    operator command's sessions are as the DSN says."""
    waits = SessionWaits(
        lock_timeout=config.db_lock_timeout,
        idle_in_transaction=config.db_idle_in_transaction_timeout,
        statement_timeout=config.db_statement_timeout,
        keepalive_idle=config.db_keepalive_idle,
    ) if instance else None  # fmt: skip
    holder = instance_holder(config.holder, instance) if instance else None
    settings = BackendSettings(config=config.core(), inbox_name=config.inbox_table,
                               holder=holder, instance=instance, waits=waits,
                               client_dir=config.oracle_client_dir)  # fmt: skip
    return open_backend(dsn or require_store(config, command), settings)


def require_schema(backend: StoreBackend) -> StoreBackend:
    """*backend*, once its database holds the flightstate schema; else PermanentError telling
    the operator to run ``migrate`` (rather than a driver's "table does not exist")."""
    missing = backend.schema_missing()
    if missing:
        raise PermanentError(
            f"the {backend.kind} store has no flightstate schema (no table {missing}): "
            "run `flightstate migrate` first"
        )
    return backend


def read_budget(config: RunnerConfig) -> ReadBudget:
    """Bytes per inbox read (``batch_max_bytes``) and the size over which a message's text
    is not read at all (the codec's ``max_message_bytes``)."""
    return ReadBudget(config.batch_max_bytes, config.core().max_message_bytes)


def _inbox(config: RunnerConfig, backend: StoreBackend, command: str) -> Inbox:
    budget = read_budget(config)
    if config.inbox_kind(command) == "mysql":
        from flightstate_mysql import MySqlInbox  # noqa: PLC0415 - only with a MySQL inbox

        try:
            return MySqlInbox(str(config.mysql_dsn), table=config.inbox_table,
                              local_tz=config.airport_tz, budget=budget,
                              received_tz=config.inbox_tz or None,
                              lock_wait_timeout=config.backfill_lock_wait_timeout)  # fmt: skip
        except ValueError as exc:
            raise ConfigError(f"mysql_dsn: {exc}") from exc
    return backend.inbox(config.inbox_table, local_tz=config.airport_tz,
                         received_tz=config.inbox_tz or None, read_bytes=budget.max_bytes,
                         message_bytes=budget.max_message_bytes)  # fmt: skip


@define
class Services:
    """The adapters of one process; ``close()`` ends their connections. ``backend`` opens
    more of them (each thread of ``run`` has its own)."""

    config: RunnerConfig
    backend: StoreBackend
    store: RunnerStore
    inbox: Inbox
    lease: RunnerLease
    outbox: Outbox
    #: Set by the pump after each commit; the dispatcher (same process) waits on it.
    dispatch_wakeup: threading.Event = field(factory=threading.Event)

    def close(self) -> None:
        """Close every connection (idempotent)."""
        for closer in (self.store, self.inbox, self.lease, self.outbox, self.backend):
            close = getattr(closer, "close", None)
            if close is not None:
                close()


def open_services(
    config: RunnerConfig, store_dsn: str | None = None, *, command: str = "run"
) -> Services:
    """Adapters on the configured store (or *store_dsn*), checked to be migrated, and the
    configured inbox (*command* names the command in a setting's error). The process gets
    a new lease instance id here: a second process with the same holder name, or this one
    restarted, is another lease holder."""
    require_store(config, command)  # missing settings are told before any connection
    config.inbox_kind(command)
    instance = new_instance()
    backend = require_schema(backend_for(config, command, instance=instance,
                                         dsn=store_dsn))  # fmt: skip
    return Services(config, backend, backend.store(), _inbox(config, backend, command),
                    backend.lease(), backend.outbox())  # fmt: skip


def build_pump(
    services: Services,
    metrics: RunnerMetrics,
    *,
    until_idle: bool,
    log: logging.Logger,
    after_commit: Any = None,
    drained: Any = None,
) -> Pump:
    """A pump over the services, its processor wrapped for logs and metrics; each commit
    wakes this process's dispatcher (``services.dispatch_wakeup``), then calls
    *after_commit*."""
    cfg = services.config
    settings = PumpSettings(
        holder=cfg.holder,
        batch_size=cfg.batch_size,
        lease_ttl=cfg.lease_ttl,
        renew_every=cfg.lease_ttl / 4,
        standby_poll=cfg.poll_interval,
        idle_poll=cfg.poll_quiet_interval,
        active_poll=cfg.poll_active_interval,
        active_for=cfg.poll_active_period,
        gather_interval=cfg.gather_interval,
        gather_max_chars=cfg.batch_max_bytes,
        batch_max_records=cfg.batch_max_records,
        retry=Backoff(cfg.backoff_initial, cfg.backoff_max),
        unexpected_attempts=cfg.max_unexpected_attempts,
        retry_budget_attempts=cfg.retry_budget_attempts,
        retry_budget_seconds=cfg.retry_budget_seconds,
        backfill_retry=Backoff(cfg.backoff_initial, cfg.backoff_max),
        backfill_interval=cfg.backfill_interval,
        stop_when_idle=until_idle,
        idle_backfill_wait=cfg.idle_wait if until_idle else None,
        gaps=cfg.gaps(),
    )
    from flightstate_core.engine.requests import schedule_response_hook  # noqa: PLC0415

    core = cfg.core()
    service = ServiceProcessor(services.store, core, after_save=schedule_response_hook(core))
    processor = ObservedProcessor(service, metrics, log)
    return Pump(
        processor=processor,
        inbox=services.inbox,
        lease=services.lease,
        backfills=services.store,
        read_cursor=services.store.inbox_cursor,
        settings=settings,
        after_commit=_waking(services.dispatch_wakeup, after_commit),
        drained=drained,
    )


def _waking(
    wakeup: threading.Event, then: Callable[[Sequence[int]], None] | None
) -> Callable[[Sequence[int]], None]:
    """An ``after_commit`` that wakes the dispatcher at once (instead of its next poll)."""

    def after_commit(message_ids: Sequence[int]) -> None:
        wakeup.set()
        if then is not None:
            then(message_ids)

    return after_commit


def kafka_settings(config: RunnerConfig, bootstrap: str, *, quiet: bool = False) -> Any:
    """``KafkaSettings`` from the runner configuration (``quiet``: librdkafka logs errors
    only, for the demo's terminal)."""
    from flightstate_kafka import KafkaSettings  # noqa: PLC0415 - only with Kafka

    return KafkaSettings(
        bootstrap_servers=bootstrap,
        topics={"schd": config.topic_schd, "msg": config.topic_msg},
        batch_size=config.dispatch_batch,
        max_backoff_s=config.backoff_max,
        producer_overrides={"log_level": "3"} if quiet else {},
        transactional_id=config.transactional_id(),
        outage_log_every_s=config.kafka_outage_log_every,
        max_record_bytes=config.kafka_max_record_bytes,
        # The fallback poll of an empty outbox (README: POLL_INTERVAL). The runner's own
        # writers wake the dispatcher at once (the pump's commits, cleanup's tombstones).
        idle_sleep_s=config.poll_interval,
    )


def build_dispatcher(
    services: Services,
    observer: MetricsObserver,
    bootstrap: str,
    *,
    quiet: bool = False,
    fence: Callable[[], bool] | None = None,
    epoch: int | None = None,
) -> Dispatcher:
    """The outbox → Kafka dispatcher, reporting to the runner's metrics; *fence* (the lease
    still held at *epoch*) is checked before each window and after each producer start.

    Woken by this process's pump after each commit (``services.dispatch_wakeup``, see
    ``build_pump``); only the leader pumps and dispatches, so no LISTEN connection is
    needed here. It still polls every ``POLL_INTERVAL`` for rows other writers commit."""
    from flightstate_kafka import Dispatcher  # noqa: PLC0415 - only with Kafka

    settings = kafka_settings(services.config, bootstrap, quiet=quiet)
    return Dispatcher(services.outbox, settings, observer=observer, fence=fence, epoch=epoch,
                      wakeup=services.dispatch_wakeup, watch_commits=False)  # fmt: skip


def provision(config: RunnerConfig, bootstrap: str, timeout: float = 10.0) -> dict[str, str]:
    """Create the two topics if missing; Kafka topic → ``created``/``exists``."""
    from flightstate_kafka import provision_topics  # noqa: PLC0415 - only with Kafka

    return dict(provision_topics(kafka_settings(config, bootstrap), timeout=timeout))
