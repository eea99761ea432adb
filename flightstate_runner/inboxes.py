"""``inbox-init`` and ``generate``: the inbox tables in a test/demo database.

In production the AODB interface owns ``cminmsgs``/``coutmsgs``; these commands exist to
set up a lab. With ``inbox = mysql`` they target MariaDB/MySQL (the real shape), marking
the table they make so that ``generate`` never writes into one they did not; with
``inbox = store``, a table of the same shape in the store's database
(``StoreBackend.insert_inbox``; the Oracle store has none and says so).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from flightstate_core.domain.errors import ConfigError
from flightstate_runner.config import RunnerConfig, redact
from flightstate_runner.wiring import backend_for

__all__ = ["fill_inbox", "init_inbox", "todays_traffic"]


def todays_traffic(config: RunnerConfig, *, messages: int, flights: int, seed: int) -> list[str]:
    """A generated day whose flights operate today at the airport: the pump's cleanup keeps
    them, where a fixed day would be removed once the retention has passed."""
    from flightstate_testing.traffic import generate_day  # noqa: PLC0415 - fake traffic only

    today = datetime.now(config.core().airport_tz).date()
    return generate_day(seed, flights=flights, messages=messages, day=today)


def _mysql(config: RunnerConfig) -> Any:
    from flightstate_mysql.probe import connect  # noqa: PLC0415 - only with a MySQL inbox

    return connect(str(config.mysql_dsn), autocommit=False)


def init_inbox(config: RunnerConfig) -> str:
    """Create the inbox table (and coutmsgs with MySQL); say what was done."""
    if config.inbox_kind("inbox-init") == "mysql":
        from flightstate_mysql import create_cminmsgs, create_coutmsgs, lab_inbox  # noqa: PLC0415

        conn = _mysql(config)
        try:
            before = lab_inbox(conn, config.inbox_table)
            create_cminmsgs(conn, config.inbox_table)
            create_coutmsgs(conn)
        finally:
            conn.close()
        if before is False:
            return (f"MySQL: {config.inbox_table} exists and was not made by inbox-init "
                    "(left as it is; `generate` will not write into it)")  # fmt: skip
        return f"MySQL: {config.inbox_table} and coutmsgs ready (a lab inbox)"
    backend = backend_for(config, "inbox-init")
    try:
        backend.insert_inbox([], config.inbox_table, received_tz=config.inbox_tz or None)
    finally:
        backend.close()
    kind = _KINDS.get(backend.kind, backend.kind)
    return f"{kind}: {config.inbox_table} ready (coutmsgs exists only in MySQL)"


_KINDS = {"postgresql": "PostgreSQL", "oracle": "Oracle", "memory": "memory"}


_CHUNK = 2000  # rows per insert call, and per progress report


def fill_inbox(
    config: RunnerConfig,
    *,
    messages: int,
    flights: int,
    seed: int,
    progress: Callable[[int, int], None] | None = None,
    force: bool = False,
) -> list[int]:
    """Insert a generated day of today's flights (``todays_traffic``); return the ids.
    ``progress(done, total)`` is called after each chunk of rows. A MySQL table that
    ``inbox-init`` did not make is refused unless *force*: it may be the AODB's own."""
    insert = _inserter(config, force=force)
    raws = todays_traffic(config, messages=messages, flights=flights, seed=seed)
    ids: list[int] = []
    for start in range(0, len(raws), _CHUNK):
        ids += insert(raws[start : start + _CHUNK])
        if progress is not None:
            progress(len(ids), len(raws))
    return ids


def _inserter(config: RunnerConfig, *, force: bool) -> Callable[[list[str]], list[int]]:
    """Insert rows into the configured inbox (created when missing); returns their ids."""
    if config.inbox_kind("generate") == "mysql":
        _lab_mysql_inbox(config, force=force)
        from flightstate_mysql import insert_messages as insert_mysql  # noqa: PLC0415

        def into_mysql(raws: list[str]) -> list[int]:
            conn = _mysql(config)
            try:
                return insert_mysql(conn, raws, table=config.inbox_table,
                                    local_tz=config.inbox_tz or None)  # fmt: skip
            finally:
                conn.close()

        return into_mysql
    backend = backend_for(config, "generate")

    def into_store(raws: list[str]) -> list[int]:
        return backend.insert_inbox(raws, config.inbox_table, received_tz=config.inbox_tz or None)

    return into_store


def _lab_mysql_inbox(config: RunnerConfig, *, force: bool) -> None:
    """Make the MySQL inbox table when missing; refuse one ``inbox-init`` did not make."""
    from flightstate_mysql import create_cminmsgs, lab_inbox  # noqa: PLC0415

    conn = _mysql(config)
    try:
        made_here = lab_inbox(conn, config.inbox_table)
        if made_here is None:
            create_cminmsgs(conn, config.inbox_table)
    finally:
        conn.close()
    if made_here is False and not force:
        raise ConfigError(
            f"inbox_table: {config.inbox_table} at {redact(str(config.mysql_dsn))} was not "
            "made by `flightstate inbox-init` and may be the AODB's live inbox: `generate` "
            "writes fake traffic only into a lab inbox (--force writes anyway)"
        )
