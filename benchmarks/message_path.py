"""Which modules of the project one FLOP passes, from the inbox read to the produce.

    PYTHONPATH=. python benchmarks/message_path.py

Real services (the machine's MariaDB and PostgreSQL, a private tansu broker): a package
creates three flights and is pumped and dispatched first, untraced; then one FLOP (a gate
change) is put into the inbox, and the pump (until idle: read, decode, decide, commit,
backfill) and the dispatcher (one window: read, plan, produce, watermark) run under a
profiler hook on every thread that records each project module whose code runs. Printed in
first-seen order: the path docs/design.md ("One message's path") lists.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pymysql

import flightstate_pg
from flightstate_core.domain.config import CoreConfig
from flightstate_kafka import Dispatcher, KafkaSettings
from flightstate_kafka.topics import provision_topics
from flightstate_mysql import MySqlInbox, create_cminmsgs, insert_messages, parse_mysql_dsn
from flightstate_pg.lease import PgLeaderLease
from flightstate_pg.outbox import PgOutbox
from flightstate_testing import SisBuilder, pump_until_idle
from flightstate_testing.kafka import TansuBroker
from flightstate_testing.mysql import create_database as create_mysql
from flightstate_testing.mysql import drop_database as drop_mysql
from flightstate_testing.postgres import create_database, drop_database

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
MYSQL_ADMIN = "mysql://root@127.0.0.1:3306/test"
ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("flightstate_core", "flightstate_pg", "flightstate_mysql", "flightstate_kafka")


class PathRecorder:
    """Project modules whose code ran while it was on, in first-seen order."""

    def __init__(self) -> None:
        self.seen: dict[str, None] = {}
        self._lock = threading.Lock()

    def _hook(self, frame: FrameType, event: str, _arg: Any) -> None:
        if event != "call":
            return
        name = frame.f_code.co_filename
        if name in self.seen or not name.startswith(str(ROOT)):
            return
        relative = str(Path(name).relative_to(ROOT))
        if relative.startswith(PACKAGES):
            with self._lock:
                self.seen.setdefault(name, None)

    def __enter__(self) -> PathRecorder:
        threading.setprofile(self._hook)  # type: ignore[arg-type]
        sys.setprofile(self._hook)  # type: ignore[arg-type]
        return self

    def __exit__(self, *_exc: object) -> None:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]

    def modules(self) -> list[str]:
        return [str(Path(name).relative_to(ROOT)) for name in self.seen]


def _dispatch_all(dispatcher: Dispatcher) -> None:
    while dispatcher.dispatch_once():
        pass


def trace(pg_dsn: str, mysql_dsn: str, bootstrap: str) -> list[str]:
    flightstate_pg.migrate(pg_dsn)
    with pymysql.connect(autocommit=True, **parse_mysql_dsn(mysql_dsn)) as conn:
        create_cminmsgs(conn)
        sis = SisBuilder(seed=7)
        insert_messages(conn, [sis.schedule("DNLD", [1, 2, 3])])
    config = CoreConfig()
    store = flightstate_pg.PgStore(pg_dsn, config)
    inbox = MySqlInbox(mysql_dsn)
    lease = PgLeaderLease(pg_dsn)
    settings = KafkaSettings(bootstrap_servers=bootstrap, transactional_id="message-path")
    provision_topics(settings)
    outbox = PgOutbox(pg_dsn)
    dispatcher = Dispatcher(outbox, settings)
    try:
        pump_until_idle(store, inbox, lease=lease, config=config)
        _dispatch_all(dispatcher)
        with pymysql.connect(autocommit=True, **parse_mysql_dsn(mysql_dsn)) as conn:
            insert_messages(conn, [sis.scalars(2, "STND", STND="215")])
        with PathRecorder() as recorder:
            pump_until_idle(store, inbox, lease=lease, config=config)
            _dispatch_all(dispatcher)
        return recorder.modules()
    finally:
        dispatcher.close()
        store.close()


def main() -> None:
    pg_dsn = create_database(PG_ADMIN)
    mysql_dsn = create_mysql(MYSQL_ADMIN)
    cleanup: list[Callable[[], None]] = [
        lambda: drop_database(PG_ADMIN, pg_dsn), lambda: drop_mysql(MYSQL_ADMIN, mysql_dsn),
    ]  # fmt: skip
    try:
        with TansuBroker() as broker:
            modules = trace(pg_dsn, mysql_dsn, broker.bootstrap)
    finally:
        for step in cleanup:
            step()
    for at, module in enumerate(modules, 1):
        print(f"{at:3d}  {module}")
    print(f"{len(modules)} modules")


if __name__ == "__main__":
    main()
