"""PgInbox (cminmsgs-shaped PostgreSQL table) against the inbox contract."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import psycopg
import pytest
from psycopg import sql

from flightstate_core.engine.budget import ReadBudget
from flightstate_core.testing.inbox_contract import ROW_KEYS, InboxContract
from flightstate_pg.inbox import PgInbox, create_inbox_table, insert_messages
from tests.fixtures.util import unique_name

pytestmark = pytest.mark.pg


class PgHarness:
    """Inbox under test plus a side connection to insert and inspect rows."""

    def __init__(self, dsn: str, table: str) -> None:
        self.table = table
        self.conn = psycopg.connect(dsn, autocommit=True)
        create_inbox_table(self.conn, table)
        self.inbox = PgInbox(dsn, table=table, local_tz="Asia/Shanghai")
        self.dsn = dsn
        self.others: list[PgInbox] = []

    def insert(self, raws: Sequence[str]) -> list[int]:
        return insert_messages(self.conn, raws, table=self.table)

    def row(self, message_id: int) -> Mapping[str, object]:
        cols = sql.SQL(", ").join(sql.Identifier(f"cminmsgs_{k.lower()}") for k in ROW_KEYS)
        query = sql.SQL("SELECT {} FROM {} WHERE cminmsgs_id = %s").format(
            cols, sql.Identifier(self.table)
        )
        values = self.conn.execute(query, (message_id,)).fetchone()
        assert values is not None
        return dict(zip(ROW_KEYS, values, strict=True))

    def count(self) -> int:
        query = sql.SQL("SELECT COUNT(*) FROM {}").format(sql.Identifier(self.table))
        row = self.conn.execute(query).fetchone()
        assert row is not None
        return int(row[0])

    def budgeted(self, budget: ReadBudget) -> PgInbox:
        inbox = PgInbox(self.dsn, table=self.table, local_tz="Asia/Shanghai", budget=budget)
        self.others.append(inbox)
        return inbox

    def close(self) -> None:
        for other in self.others:
            other.close()
        self.conn.execute(sql.SQL("DROP TABLE {}").format(sql.Identifier(self.table)))
        self.conn.close()
        self.inbox.close()


class TestPgInbox(InboxContract):
    @pytest.fixture
    def inbox_harness(self, pg_dsn: str) -> Iterator[PgHarness]:
        harness = PgHarness(pg_dsn, unique_name("cminmsgs"))
        yield harness
        harness.close()
