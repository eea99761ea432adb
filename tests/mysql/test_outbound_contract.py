"""MySqlOutbound against the outbound contract, on a real MariaDB (fresh table per test)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pymysql
import pytest

from flightstate_core.testing.outbound_contract import OutboundContract
from flightstate_mysql import create_coutmsgs, parse_mysql_dsn
from flightstate_mysql.outbound import MySqlOutbound
from tests.fixtures.util import unique_name

pytestmark = pytest.mark.mysql


class _Harness:
    """The outbound under test, and a session of its own to read what it committed."""

    def __init__(self, dsn: str, table: str) -> None:
        self.dsn, self.table = dsn, table
        with pymysql.connect(**parse_mysql_dsn(dsn)) as conn:
            create_coutmsgs(conn, table)
        self.outbound = MySqlOutbound(dsn, table=table)

    def sent(self) -> Sequence[tuple[int, str, str]]:
        with pymysql.connect(**parse_mysql_dsn(self.dsn)) as conn, conn.cursor() as cur:
            cur.execute(f"SELECT COUTMSGS_ID, COUTMSGS_CLOB_MSG, ROUTINGID FROM `{self.table}` "
                        "ORDER BY COUTMSGS_ID")  # fmt: skip
            return [(int(i), str(text), str(routing)) for i, text, routing in cur.fetchall()]

    def close(self) -> None:
        self.outbound.close()
        with pymysql.connect(**parse_mysql_dsn(self.dsn)) as conn, conn.cursor() as cur:
            cur.execute(f"DROP TABLE IF EXISTS `{self.table}`")


class TestMySqlOutboundContract(OutboundContract):
    """Every outbound contract test on a fresh ``coutmsgs`` table."""

    @pytest.fixture
    def outbound_harness(self, mysql_dsn: str) -> Iterator[_Harness]:
        harness = _Harness(mysql_dsn, unique_name("cout"))
        yield harness
        harness.close()
