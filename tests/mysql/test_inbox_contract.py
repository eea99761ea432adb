"""MySqlInbox against the inbox contract, on a real MariaDB (fresh table per test)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pymysql
import pytest

from flightstate_core.engine.budget import ReadBudget
from flightstate_core.testing.inbox_contract import ROW_KEYS, InboxContract
from flightstate_mysql import MySqlInbox, create_cminmsgs, insert_messages, parse_mysql_dsn
from tests.fixtures.util import unique_name

pytestmark = pytest.mark.mysql


class MySqlHarness:
    """Inbox under test plus a side connection to insert and inspect rows."""

    def __init__(self, dsn: str, table: str) -> None:
        self.table = table
        self.conn = pymysql.connect(autocommit=True, **parse_mysql_dsn(dsn))
        create_cminmsgs(self.conn, table)
        self.inbox = MySqlInbox(dsn, table=table, local_tz="Asia/Shanghai")
        self.dsn = dsn
        self.others: list[MySqlInbox] = []

    def insert(self, raws: Sequence[str]) -> list[int]:
        return insert_messages(self.conn, raws, table=self.table)

    def row(self, message_id: int) -> Mapping[str, object]:
        cols = ", ".join(f"CMINMSGS_{key}" for key in ROW_KEYS)
        with self.conn.cursor() as cur:
            cur.execute(f"SELECT {cols} FROM `{self.table}` WHERE CMINMSGS_ID = %s", (message_id,))
            values: Any = cur.fetchone()
        return dict(zip(ROW_KEYS, values, strict=True))

    def count(self) -> int:
        with self.conn.cursor() as cur:
            cur.execute(f"SELECT COUNT(*) FROM `{self.table}`")
            return int(cur.fetchone()[0])

    def budgeted(self, budget: ReadBudget) -> MySqlInbox:
        inbox = MySqlInbox(self.dsn, table=self.table, local_tz="Asia/Shanghai", budget=budget)
        self.others.append(inbox)
        return inbox

    def close(self) -> None:
        for other in self.others:
            other.close()
        with self.conn.cursor() as cur:
            cur.execute(f"DROP TABLE IF EXISTS `{self.table}`")
        self.conn.close()
        self.inbox.close()


class TestMySqlInbox(InboxContract):
    @pytest.fixture
    def inbox_harness(self, mysql_dsn: str) -> Iterator[MySqlHarness]:
        harness = MySqlHarness(mysql_dsn, unique_name("cminmsgs"))
        yield harness
        harness.close()
