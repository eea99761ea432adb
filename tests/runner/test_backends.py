"""The runner's commands end to end on every store, through the same wiring: the store is
chosen by ``FLIGHTSTATE_STORE_DSN``'s scheme (``flightstate_runner.backends``), and each
command below runs unchanged on PostgreSQL, on the memory store and, with
``FLIGHTSTATE_TEST_ORACLE_DSN``, on Oracle 11g (``tests/runner/_backends.py``).

Real services only: PostgreSQL (a fresh database), MariaDB for Oracle's inbox; no Kafka
(events stay in the outbox, as ``run`` says without a bootstrap).
"""

from __future__ import annotations

import re

import pytest

from tests.runner._backends import StoreCase

pytestmark = [pytest.mark.slow]

_MESSAGES = 120
_FLIGHTS = 15


def _setup(case: StoreCase) -> list[int]:
    """migrate, inbox-init, generate: the inbox holds a generated day; its ids."""
    assert "migration(s)" in case.ok("migrate")
    assert "ready" in case.ok("inbox-init")
    found = re.search(r"inserted (\d+) message\(s\), ids (\d+)\.\.(\d+)",
                      case.ok("generate", "--messages", str(_MESSAGES), "--flights",
                              str(_FLIGHTS), "--seed", "5"))  # fmt: skip
    assert found is not None
    assert int(found[1]) == _MESSAGES
    return list(range(int(found[2]), int(found[3]) + 1))


def _flids(case: StoreCase) -> list[str]:
    """Every current FLID, read through the backend the runner opens."""
    backend = case.backend()
    store = backend.store(cache=False)
    try:
        return [state.flid for state in store.iter_flights()]
    finally:
        store.close()
        backend.close()


def test_status_before_and_after_a_run(store_case: StoreCase) -> None:
    ids = _setup(store_case)
    before = store_case.status()
    assert before["inbox"]["lag"] == len(ids)
    assert before["inbox"]["kind"] == ("mysql" if store_case.kind == "oracle" else store_case.kind)
    assert before["store"] == store_case.kind
    assert before["leader"]["active"] is False
    assert before["leader"]["holder"] is None
    assert sum(before["outcomes"].values()) == 0
    store_case.ok("run", "--until-idle", "--holder", "e2e")
    after = store_case.status()
    assert after["inbox"]["lag"] == 0
    assert after["inbox"]["cursor"] == ids[-1]
    assert sum(after["outcomes"].values()) == len(ids)
    assert after["backfill_backlog"] == 0
    assert after["outbox"]["backlog"] > 0  # no Kafka: the events wait in the outbox
    assert after["last_runner"]["holder"] == "e2e"
    assert after["last_runner"]["stats"]["running"] is False
    dead = after["outcomes"].get("DEAD", 0)
    assert len(after["dead"]) == min(dead, 10)
    assert sum(r["count"] for r in after["dead_by_reason"]) == dead
    text = store_case.ok("status")
    assert "lag 0 message(s)" in text
    assert "leader:   none" in text  # the run ended and released its lease


def test_show_history_and_republish_one_flight(store_case: StoreCase) -> None:
    _setup(store_case)
    store_case.ok("run", "--until-idle", "--holder", "e2e")
    flid = _flids(store_case)[0]
    assert f'"flid": "{flid}"' in store_case.ok("show", flid, "--json")
    history = store_case.ok("history", flid, "--json")
    assert '"messageId"' in history
    assert '"change": "CREATED"' in history
    backlog = store_case.status()["outbox"]["backlog"]
    assert store_case.ok("republish", "--flid", flid).strip() == "1 record(s) written to the outbox"
    assert store_case.status()["outbox"]["backlog"] == backlog + 1
    missing = store_case.invoke("show", "NO-SUCH-FLID")
    assert missing.exit_code == 1
    assert "no flight NO-SUCH-FLID" in missing.output
    typo = store_case.invoke("republish", "--flid", "NO-SUCH-FLID")
    assert typo.exit_code == 1
    assert store_case.status()["outbox"]["backlog"] == backlog + 1  # nothing written


def test_requeue_cleanup_and_requests(store_case: StoreCase) -> None:
    _setup(store_case)
    store_case.ok("run", "--until-idle", "--holder", "e2e")
    report = store_case.status()
    assert report["dead"], "the generated day mixes in bad messages"
    dead = report["dead"][0]
    result = store_case.invoke("requeue", str(dead["message_id"]))
    line = result.stdout.strip()
    assert line.startswith(f"message {dead['message_id']}: DEAD ("), result.output
    assert result.exit_code == (1 if "-> DEAD" in line else 0)
    again = store_case.status()["dead"]
    attempts = {d["message_id"]: d["attempts"] for d in again}
    assert attempts.get(dead["message_id"], dead["attempts"] + 1) == dead["attempts"] + 1
    flights = len(_flids(store_case))
    summary = store_case.ok("cleanup", "--retention-days", "0", "--quiet-days", "0")
    removed = re.search(r"removed (\d+) flight\(s\)", summary)
    assert removed is not None, summary
    assert len(_flids(store_case)) == flights - int(removed[1])
    requests = store_case.ok("requests", "--json")
    assert '"open": 0' in requests
    assert '"answered": 0' in requests
    text = store_case.ok("requests")
    assert text.splitlines()[0] == (
        "requests: 0 open, 0 answered, 0 failed; 0 unsolicited response(s)"
    )


@pytest.mark.pg
def test_a_store_without_the_schema_says_run_migrate(pg_db: str) -> None:
    """Only a SQL store starts without the schema (memory has its tables from the start)."""
    case = StoreCase("postgresql", pg_db, {"FLIGHTSTATE_STORE_DSN": pg_db,
                                           "FLIGHTSTATE_INBOX": "store",
                                           "FLIGHTSTATE_INBOX_TABLE": "cminmsgs"})  # fmt: skip
    result = case.invoke("status")
    assert result.exit_code == 1
    assert "the postgresql store has no flightstate schema" in result.output
    assert "run `flightstate migrate` first" in result.output
