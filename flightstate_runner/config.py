"""Runner configuration: defaults, then an optional TOML file, then the environment.

Validated on start: a bad value raises ``ConfigError`` naming the setting. DSNs may hold
passwords, so anything printed or logged goes through ``redact``.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Mapping
from datetime import time
from pathlib import Path
from typing import Any

from attrs import evolve, field, fields, frozen

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.errors import ConfigError
from flightstate_core.domain.gaps import GapSettings
from flightstate_core.domain.numbers import check_number, in_range
from flightstate_core.engine.budget import DEFAULT_BATCH_MAX_BYTES, DEFAULT_BATCH_MAX_RECORDS
from flightstate_core.support.dsn import check_url_credentials, redact
from flightstate_runner import setting_rules as rules
from flightstate_runner.backends import check_dsn, scheme_of

__all__ = [
    "ENV_PREFIX", "RunnerConfig", "check_number", "config_layers", "load_config", "redact",
]  # fmt: skip

ENV_PREFIX = "FLIGHTSTATE_"
_MIB = 1024 * 1024
_URL_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_PG_SCHEMES = ("postgresql://", "postgres://")


def _cutover(value: str | time) -> time:
    if isinstance(value, time):
        return value
    match = re.fullmatch(r"(\d{1,2}):(\d{2})", str(value).strip())
    if not match or int(match[1]) > 23 or int(match[2]) > 59:  # noqa: PLR2004 - hours, minutes
        raise ConfigError(f"opday_cutover: {value!r} is not HH:MM")
    return time(int(match[1]), int(match[2]))














_DAY = 86_400.0
_YEAR_DAYS = 3650.0  # ten years: a retention longer than that is a typo, not a policy


def _positive(high: float) -> Any:
    return in_range(0, high, low_open=True)


def _not_negative(high: float) -> Any:
    """0 turns the setting (a periodic task) off."""
    return in_range(0, high)




def _pg_dsn(instance: object, attribute: Any, value: str | None) -> None:
    """A libpq URL or key=value conninfo, checked without connecting (``notadsn`` would
    otherwise fail only at the first connection, as a runtime error). The alias of
    ``store_dsn`` for PostgreSQL, so another scheme is refused here."""
    if value is None:
        return
    try:
        check_url_credentials(value, raw_at=False)
    except ValueError as exc:
        raise ConfigError(f"{attribute.name}: {exc}") from None
    if _URL_SCHEME.match(value) and not value.startswith(_PG_SCHEMES):
        raise ConfigError(f"{attribute.name}: not a postgresql:// URL")
    check_dsn(value, attribute.name)


def _store_dsn(instance: object, attribute: Any, value: str | None) -> None:
    """``postgresql://`` (or a key=value conninfo), ``oracle://`` or ``memory://``, parsed
    by its store package without connecting."""
    if value is None:
        return
    try:
        check_url_credentials(value, raw_at=scheme_of(value) != "postgresql")
    except ValueError as exc:
        raise ConfigError(f"{attribute.name}: {exc}") from None
    check_dsn(value, attribute.name)


def _mysql_dsn(instance: object, attribute: Any, value: str | None) -> None:
    if value is None:
        return
    try:
        from flightstate_mysql.dsn import parse_mysql_dsn  # noqa: PLC0415 - only when set
    except ImportError:  # no MySQL extra: the inbox will say so when it is opened
        return
    try:
        parse_mysql_dsn(value)
    except ValueError as exc:
        raise ConfigError(f"{attribute.name}: {exc}") from None


def _seconds(maximum: float, *, zero_ok: bool = True) -> Any:
    """Seconds in [0, maximum] ((0, maximum] unless *zero_ok*)."""
    return in_range(0, maximum, low_open=not zero_ok)












@frozen
class RunnerConfig:
    """Every runner setting. ``store_dsn`` chooses the store by its scheme (``pg_dsn`` is
    its PostgreSQL alias); neither set: ``demo`` starts an embedded PostgreSQL;
    ``inbox`` names where messages are read (``inbox_kind``);
    ``kafka_bootstrap=None``: events stay in the outbox."""

    store_dsn: str | None = field(default=None, validator=_store_dsn)
    pg_dsn: str | None = field(default=None, validator=_pg_dsn)
    mysql_dsn: str | None = field(default=None, validator=_mysql_dsn)
    # where messages are read: "mysql", the AODB's table at mysql_dsn, or "store", a lab
    # table made by inbox-init in the store's database. Always said, never inferred from a
    # missing DSN: a lab inbox in a production store would be read as silence.
    inbox: str = field(default="mysql", validator=rules.inbox_kind)
    kafka_bootstrap: str | None = field(default=None, validator=rules.bootstrap)
    airport_tz: str = "Asia/Shanghai"
    # zone of the inbox's DATE_RECEIVED; "" = the inbox server's own clock (read with each
    # row), never assumed to be airport_tz (docs/design.md "Operator view")
    inbox_tz: str = field(default="", validator=rules.inbox_zone)
    opday_cutover: time = field(default=time(0, 0), converter=_cutover)
    inbox_table: str = field(default="cminmsgs", validator=rules.table)
    topic_schd: str = "schd"
    topic_msg: str = "msg"
    batch_size: int = field(default=1000, validator=_positive(100_000))
    batch_max_bytes: int = field(
        default=DEFAULT_BATCH_MAX_BYTES, validator=in_range(_MIB, 4096 * _MIB)
    )
    # decoded flight records per batch (docs/design.md "Poison-proof bounds")
    batch_max_records: int = field(
        default=DEFAULT_BATCH_MAX_RECORDS, validator=in_range(1, 100_000_000)
    )
    backoff_initial: float = field(default=0.2, validator=_positive(3600))
    backoff_max: float = field(default=10.0, validator=_positive(3600))
    max_unexpected_attempts: int = field(default=3, validator=_positive(1000))
    # the head message's retry budget (docs/design.md "A retry budget for the head message"):
    # DEAD once this many transient failures AND seconds passed while the store answered
    # its health probe; 0 attempts: retry for ever
    retry_budget_attempts: int = field(default=10, validator=in_range(0, 1_000_000))
    retry_budget_seconds: float = field(default=120.0, validator=in_range(0, 7 * _DAY))
    lease_ttl: float = field(default=10.0, validator=_positive(_DAY))
    poll_interval: float = field(default=0.5, validator=_positive(3600))
    # adaptive inbox polling (docs/design.md "Adaptive inbox polling"): the interval while
    # messages arrived within the period (s), then doubling back to poll_quiet_interval
    poll_active_interval: float = field(default=0.002, validator=in_range(0.001, 3600))
    poll_active_period: float = field(default=2.0, validator=in_range(0, 3600))
    poll_quiet_interval: float = field(default=0.05, validator=in_range(0.001, 3600))
    # while a batch is applied, read again this often (s) to gather arrivals into the next
    # batch (docs/design.md "What 1,000 messages per second cost"); 0: read it once
    gather_interval: float = field(default=0.005, validator=in_range(0, 3600))
    # at least this long (s) between backfill flushes: one inbox UPDATE for several commits
    backfill_interval: float = field(default=0.1, validator=in_range(0, 60))
    dispatch_batch: int = field(default=5000, validator=_positive(1_000_000))
    metrics_port: int | None = field(default=None, validator=rules.port)
    metrics_bind: str = field(default="127.0.0.1", validator=rules.bind_address)
    # housekeeping inside `run` (seconds between runs; 0 turns a task off)
    cleanup_interval: float = field(default=300.0, validator=_not_negative(7 * _DAY))
    retention_days: float = field(default=3.0, validator=_not_negative(_YEAR_DAYS))
    quiet_days: float = field(default=2.0, validator=_not_negative(_YEAR_DAYS))
    null_day_quiet_days: float = field(default=14.0, validator=_not_negative(_YEAR_DAYS))
    cleanup_batch: int = field(default=500, validator=_positive(100_000))
    request_interval: float = field(default=60.0, validator=_not_negative(_DAY))
    request_timeout: float = field(default=600.0, validator=_positive(7 * _DAY))
    request_max_attempts: int = field(default=3, validator=_positive(1000))
    purge_interval: float = field(default=600.0, validator=_not_negative(7 * _DAY))
    outbox_retention_hours: float = field(default=24.0, validator=_not_negative(24 * _YEAR_DAYS))
    # bounded waits of every PostgreSQL session (flightstate_pg.session; 0 turns one off)
    db_lock_timeout: float = field(default=3.0, validator=_seconds(3600))
    db_idle_in_transaction_timeout: float = field(default=10.0, validator=_seconds(3600))
    db_statement_timeout: float = field(default=20.0, validator=_seconds(3600))
    db_keepalive_idle: float = field(default=10.0, validator=_seconds(3600))
    # MariaDB/MySQL inbox: innodb_lock_wait_timeout of the backfill session (1..3600 s)
    backfill_lock_wait_timeout: int = field(default=5, validator=_seconds(3600, zero_ok=False))
    # `run --until-idle`: seconds idle with failing backfills or an undrained outbox
    idle_wait: float = field(default=60.0, validator=_seconds(86400, zero_ok=False))
    # "" = flightstate-<topic_schd>: one id per deployment (every runner of it shares it)
    kafka_transactional_id: str = field(default="", validator=rules.transactional_id)
    kafka_outage_log_every: float = field(default=60.0, validator=_seconds(86400, zero_ok=False))
    # the largest Kafka record (bytes, before compression): producer and `topics` follow it
    kafka_max_record_bytes: int = field(default=1_000_000, validator=in_range(2048, 1_000_000_000))
    # gap-aware inbox reading (docs/design.md "Gaps in the inbox ids"), seconds / ids
    gap_grace: float = field(default=1.0, validator=in_range(0, 3600))
    gap_horizon: float = field(default=21600.0, validator=in_range(1, 30 * 86400))
    gap_reconcile_interval: float = field(default=300.0, validator=in_range(0, 86400))
    gap_reconcile_window: int = field(default=100_000, validator=in_range(1, 100_000_000))
    log_level: str = field(default="INFO", validator=rules.level)
    # Oracle Client libraries (thick mode, needed for 11.2); "" = the system library path
    oracle_client_dir: str = field(default="", validator=rules.directory)
    holder: str = field(
        factory=lambda: f"{os.uname().nodename}:{os.getpid()}", validator=rules.holder
    )

    def takeover_bound(self) -> float:
        """Seconds after a leader freezes (even inside a transaction) within which a
        standby leads: its lease and its open transaction's locks are gone by then, and
        the standby's next try (after at most one lock wait and one poll) succeeds."""
        held = max(self.lease_ttl, self.db_idle_in_transaction_timeout or math.inf,
                   self.db_statement_timeout or math.inf)  # fmt: skip
        return held + self.db_lock_timeout + self.poll_interval + self.backoff_max

    def __attrs_post_init__(self) -> None:
        if self.store_dsn and self.pg_dsn and self.store_dsn != self.pg_dsn:
            raise ConfigError("store_dsn and pg_dsn: both set and different (pg_dsn is the "
                              "PostgreSQL alias of store_dsn: set one of them)")  # fmt: skip
        if self.inbox == "store" and self.mysql_dsn:
            raise ConfigError("inbox: store, but mysql_dsn is set too: the inbox is either "
                              "the MySQL table (inbox=mysql) or the store's (inbox=store)")
        if self.gap_horizon < self.gap_grace:
            raise ConfigError(f"gap_horizon: {self.gap_horizon!r} is below gap_grace "
                              f"{self.gap_grace!r}")  # fmt: skip

    def store(self) -> str | None:
        """The store DSN: ``store_dsn``, else its alias ``pg_dsn`` (None: neither set)."""
        return self.store_dsn or self.pg_dsn

    def inbox_kind(self, command: str) -> str:
        """``"mysql"`` or ``"store"`` for a command that reads or writes the inbox;
        ConfigError (exit 2) when the MySQL inbox, the default, has no DSN."""
        if self.inbox == "mysql" and not self.mysql_dsn:
            raise ConfigError(
                f"mysql_dsn: `{command}` reads the AODB's MySQL inbox (inbox=mysql, the "
                "default) and needs FLIGHTSTATE_MYSQL_DSN; a lab inbox table in the store's "
                "database is FLIGHTSTATE_INBOX=store"
            )
        return self.inbox

    def gaps(self) -> GapSettings:
        """The pump's gap settings."""
        return GapSettings(
            grace=self.gap_grace, horizon=self.gap_horizon,
            late_poll=min(1.0, max(self.poll_interval, 0.05)),
            reconcile_every=self.gap_reconcile_interval,
            reconcile_window=self.gap_reconcile_window,
        )  # fmt: skip

    def core(self) -> CoreConfig:
        """The pure core's part of the configuration."""
        return CoreConfig(airport_tz=self.airport_tz, opday_cutover=self.opday_cutover)

    def transactional_id(self) -> str:
        """The Kafka transactional id in effect: the setting, else one derived from the
        ``schd`` topic (every runner of one airport shares it, so a new leader fences the
        old one's producer)."""
        return self.kafka_transactional_id or f"flightstate-{self.topic_schd}"

    def describe(self) -> dict[str, object]:
        """Settings for status output and logs, with secrets redacted; derived defaults
        (the transactional id) as they take effect."""
        shown = {f.name: getattr(self, f.name) for f in fields(RunnerConfig)}
        shown["kafka_transactional_id"] = self.transactional_id()
        for name in ("store_dsn", "pg_dsn", "mysql_dsn", "kafka_bootstrap"):
            shown[name] = redact(shown[name]) if shown[name] else None
        shown["opday_cutover"] = self.opday_cutover.strftime("%H:%M")
        return shown


_INT_FIELDS = {
    "batch_size", "batch_max_bytes", "max_unexpected_attempts", "dispatch_batch", "metrics_port",
    "retry_budget_attempts", "batch_max_records",
    "cleanup_batch", "request_max_attempts", "backfill_lock_wait_timeout", "gap_reconcile_window",
    "kafka_max_record_bytes",
}  # fmt: skip
_FLOAT_FIELDS = {
    "backoff_initial", "backoff_max", "lease_ttl", "poll_interval", "cleanup_interval",
    "poll_active_interval", "poll_active_period", "poll_quiet_interval", "backfill_interval",
    "gather_interval", "retry_budget_seconds",
    "retention_days", "quiet_days", "null_day_quiet_days", "request_interval", "request_timeout",
    "purge_interval", "outbox_retention_hours", "db_lock_timeout",
    "db_idle_in_transaction_timeout", "db_statement_timeout", "db_keepalive_idle", "idle_wait",
    "kafka_outage_log_every",
    "gap_grace", "gap_horizon",
    "gap_reconcile_interval",
}  # fmt: skip


def _coerce(name: str, value: object) -> object:
    try:
        if name in _INT_FIELDS:
            return int(str(value))
        if name in _FLOAT_FIELDS:
            return float(str(value))
    except ValueError as exc:
        raise ConfigError(f"{name}: {value!r} is not a number") from exc
    return value


def _known(values: Mapping[str, object], source: str) -> dict[str, object]:
    names = {f.name for f in fields(RunnerConfig)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise ConfigError(f"{source}: unknown setting(s) {', '.join(unknown)}")
    return {name: _coerce(name, value) for name, value in values.items()}


def _from_env(environ: Mapping[str, str]) -> dict[str, object]:
    names = {f.name for f in fields(RunnerConfig)}
    found = {}
    for key, value in environ.items():
        if key.startswith(ENV_PREFIX) and key[len(ENV_PREFIX) :].lower() in names and value != "":
            found[key[len(ENV_PREFIX) :].lower()] = value
    return _known(found, "environment")


def config_layers(
    path: Path | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, object] | None = None,
) -> list[tuple[str, dict[str, object]]]:
    """The settings each source sets, lowest precedence first: ``("file", ...)`` (the TOML
    file, table ``[flightstate]`` or top level), ``("environment", ...)`` (``FLIGHTSTATE_*``),
    ``("option", ...)`` (explicit overrides: CLI options)."""
    layers: list[tuple[str, dict[str, object]]] = []
    if path is not None:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"config file {path}: {exc}") from exc
        layers.append(("file", _known(data.get("flightstate", data), f"config file {path}")))
    layers.append(("environment", _from_env(os.environ if environ is None else environ)))
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    layers.append(("option", _known(given, "options")))
    return layers


def load_config(
    path: Path | None = None,
    environ: Mapping[str, str] | None = None,
    **overrides: object,
) -> RunnerConfig:
    """Defaults, then the TOML file (table ``[flightstate]`` or top level), then
    ``FLIGHTSTATE_*`` variables, then explicit overrides (CLI options)."""
    config = RunnerConfig()
    for _source, layer in config_layers(path, environ, overrides):
        try:
            config = evolve(config, **layer)  # type: ignore[arg-type]  # values checked by attrs
        except (TypeError, ValueError) as exc:
            raise ConfigError(str(exc)) from exc
    config.core()  # validates the zone
    return config
