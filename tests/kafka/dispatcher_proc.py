"""A dispatcher process for the crash test: ``python -m tests.kafka.dispatcher_proc
DSN BOOTSTRAP SCHD_TOPIC MSG_TOPIC BATCH``. SIGTERM stops it gracefully (flush)."""

from __future__ import annotations

import logging
import signal
import sys
import threading

from flightstate_kafka import Dispatcher, KafkaSettings
from flightstate_pg.outbox import PgOutbox


def main(argv: list[str]) -> None:
    """Run a dispatcher until SIGTERM."""
    dsn, bootstrap, schd, msg, batch = argv
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s")
    settings = KafkaSettings(
        bootstrap,
        topics={"schd": schd, "msg": msg},
        batch_size=int(batch),
        delivery_timeout_s=3.0,
        stuck_after_s=5.0,
        max_backoff_s=0.5,
        idle_sleep_s=0.05,
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    outbox = PgOutbox(dsn)
    try:
        Dispatcher(outbox, settings).run(stop)
    finally:
        outbox.close()


if __name__ == "__main__":
    main(sys.argv[1:])
