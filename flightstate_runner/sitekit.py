"""The site kit's commands: ``flightstate check`` (is this deployment ready?) and
``flightstate selftest --store DSN`` (does the store backend work on this database?).

Both only read what a deployment already has, or write into throwaway objects of their own:
``check`` asks each adapter package for its checks (the store through the backend port, the
inbox through ``flightstate_mysql.preflight``, the broker through
``flightstate_kafka.preflight``); ``selftest`` runs the contract suites CI runs
(``flightstate_testing.selftest``) on the given database and drops what they made.
"""

from __future__ import annotations

from collections.abc import Callable

from flightstate_core.domain.errors import ConfigError
from flightstate_core.ports import SessionWaits
from flightstate_core.support.preflight import Check, failed
from flightstate_runner.config import RunnerConfig
from flightstate_runner.wiring import backend_for, kafka_settings

__all__ = ["deployment_checks", "run_selftest"]


def _waits(config: RunnerConfig) -> SessionWaits:
    return SessionWaits(lock_timeout=config.db_lock_timeout,
                        idle_in_transaction=config.db_idle_in_transaction_timeout,
                        statement_timeout=config.db_statement_timeout,
                        keepalive_idle=config.db_keepalive_idle)  # fmt: skip


def _store_checks(config: RunnerConfig) -> list[Check]:
    if not config.store():
        return [failed("store", "no store configured", "set FLIGHTSTATE_STORE_DSN")]
    backend = backend_for(config, "check")
    try:
        return backend.checks(_waits(config))
    finally:
        backend.close()


def _inbox_checks(config: RunnerConfig) -> list[Check]:
    if config.inbox == "store":
        return [failed("inbox", "a lab inbox in the store (FLIGHTSTATE_INBOX=store)",
                       "a site reads the AODB's table: unset FLIGHTSTATE_INBOX and set "
                       "FLIGHTSTATE_MYSQL_DSN")]  # fmt: skip
    if not config.mysql_dsn:
        return [failed("inbox", "no MySQL inbox configured",
                       "set FLIGHTSTATE_MYSQL_DSN (the AODB's inbox database)")]  # fmt: skip
    from flightstate_mysql.preflight import inbox_checks  # noqa: PLC0415 - MySQL extra

    return inbox_checks(config.mysql_dsn, config.inbox_table, airport_tz=config.airport_tz,
                        inbox_tz=config.inbox_tz or None)  # fmt: skip


def _broker_checks(config: RunnerConfig) -> list[Check]:
    if not config.kafka_bootstrap:
        return [failed("broker", "no Kafka bootstrap configured",
                       "set FLIGHTSTATE_KAFKA_BOOTSTRAP")]  # fmt: skip
    from flightstate_kafka.preflight import broker_checks  # noqa: PLC0415 - Kafka extra

    return broker_checks(kafka_settings(config, config.kafka_bootstrap))


def deployment_checks(config: RunnerConfig) -> list[Check]:
    """Every check of the configured store, inbox and broker, in that order."""
    return [*_store_checks(config), *_inbox_checks(config), *_broker_checks(config)]


def run_selftest(store_dsn: str, echo: Callable[[str], None]) -> bool:
    """The contract suites on *store_dsn*'s database, each item echoed, then a summary line;
    True when every one passed. The database is left as it was."""
    try:
        from flightstate_testing.selftest import run_suites  # noqa: PLC0415 - needs pytest
    except ImportError as exc:
        raise ConfigError(f"selftest needs the testing extra ({exc.name} is missing): "
                          "pip install 'flightstate[runner,testing]'") from None  # fmt: skip
    report = run_suites(store_dsn, echo=echo)
    ran = [item for item in report.items if item.outcome != "skipped"]
    failed_items = [item for item in ran if item.outcome == "failed"]
    left = f"; dropped {len(report.leftovers)} schema(s) a crash left" if report.leftovers else ""
    verdict = "passed" if report.passed else f"FAILED ({len(failed_items)} failed)"
    echo(f"selftest {verdict}: {len(ran)} contract items in {report.seconds:.1f} s{left}")
    return report.passed
