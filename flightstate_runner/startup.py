"""``run``'s start: wait for the store as for an outage later, and stop cleanly meanwhile.

An unreachable store at start is waited out (one warning per attempt, capped back-off),
as one that goes away while running is (docs/operations.md); a store that refuses the
login is a setting to fix (exit 2); nothing else is retried here.
"""

from __future__ import annotations

import logging
import signal
import time
from collections.abc import Callable

from flightstate_core.domain.errors import ConfigError, FlightstateError
from flightstate_core.ports import StoreBackend, StoreFailure
from flightstate_runner.config import RunnerConfig, redact

__all__ = ["await_schema", "stop_while_waiting", "wait_for_store"]


def wait_for_store(backend: StoreBackend, check: Callable[[], object], backoff_max: float,
                   log: logging.Logger) -> None:  # fmt: skip
    """Run *check* until the store answers. A refused login: ConfigError (exit 2, one
    line); any failure but an unreachable store: raised at once."""
    delay = 0.5
    while True:
        try:
            check()
            return
        except FlightstateError as exc:
            failure = backend.failure(exc)
            if failure is StoreFailure.REFUSED:
                raise ConfigError(f"store_dsn: the {backend.kind} store refused the login: "
                                  f"{redact(str(exc))}") from exc  # fmt: skip
            if failure is not StoreFailure.UNREACHABLE:
                raise
            log.warning("store not reachable, retrying in %.1f s: %s", delay, redact(str(exc)))
            time.sleep(delay)
            delay = min(backoff_max, delay * 2)


def stop_while_waiting(log: logging.Logger) -> None:
    """Until the runner installs its own handlers: SIGTERM (systemd's stop) ends ``run`` at
    once with exit 0, SIGINT as an interrupt (exit 130), whatever disposition the process
    inherited (a shell starts background jobs with SIGINT ignored)."""

    def stop(_signum: int, _frame: object) -> None:
        log.info("stopped before the store answered", extra={"event": "stop"})
        raise SystemExit(0)

    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, stop)


def await_schema(config: RunnerConfig, log: logging.Logger) -> None:
    """Wait for the store to answer (``wait_for_store``), then check it is migrated."""
    from flightstate_runner.wiring import backend_for, require_schema  # noqa: PLC0415

    backend = backend_for(config, "run")
    try:
        wait_for_store(backend, lambda: require_schema(backend), config.backoff_max, log)
    finally:
        backend.close()
