"""Pure parts of the Oracle batch path and the operations: no server involved.

``plan_writes`` (what ``save_many`` executes) must have the effect of saving each message
in order: the checks below compare the plan of a batch with the plans of its messages
applied one by one, through ``oracle_keeps`` (Oracle's '' -> NULL) and the row decoders.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import attrs
import pytest

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.items import Item
from flightstate_core.domain.layout import DETAIL_TABLES, MAIN_TABLE
from flightstate_core.domain.state import FlightStatus
from flightstate_core.engine.lifecycle import CleanupPlan, RetentionPolicy
from flightstate_core.ports import RequestStatus
from flightstate_core.testing.store_contract import flight, processed
from flightstate_oracle import _sql as sql
from flightstate_oracle._load import chunked, in_params
from flightstate_oracle._records import proc_from_row
from flightstate_oracle._rows import flight_from_rows
from flightstate_oracle._schema import TABLES, Bind
from flightstate_oracle._writes import plan_writes
from flightstate_oracle.lifecycle import cleanup_candidate_params, cleanup_event_rows
from flightstate_oracle.operator import republish_rows, snap_mentions
from flightstate_oracle.outbox import leading_run
from flightstate_oracle.requests import request_record
from flightstate_oracle.transaction import duplicate_params

ZONE = ZoneInfo("Asia/Shanghai")
NOW = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)
CONFIG = CoreConfig()


def oracle_keeps(row: dict[str, object]) -> dict[str, object]:
    """What Oracle stores for a bind row: "" becomes NULL, everything else as bound."""
    return {k: (None if v == "" else v) for k, v in row.items()}


def _gates(*codes: str) -> dict[str, tuple[Item, ...]]:
    return {"GTDT": tuple(Item.of(n, str(n), {"GATE": g}) for n, g in enumerate(codes, 1))}


def test_batch_writes_only_the_final_state_of_each_flight() -> None:
    a1 = flight("A", 1)
    a2 = flight("A", 2, collections=_gates("G1", ""))  # present-empty gate code survives
    b1 = flight("B", 1)
    batch = [processed(1, a1), processed(2, b1), processed(3, a2)]
    plan = plan_writes(batch, {"A": None, "B": None}, zone=ZONE, pivot=70)

    assert [row["FLID"] for row in plan.mains] == ["A", "B"]
    assert [row["STATE_VERSION"] for row in plan.mains] == [2, 1]
    deletes, inserts = plan.details["FLIGHT_GATE"]
    assert deletes == []  # neither existed before the batch
    assert [(r["FLID"], r["ORDINAL"], r["GATE"]) for r in inserts] == [
        ("A", 1, "G1"), ("A", 2, None), ("B", 1, "G28"),
    ]  # fmt: skip
    details = {name: [] for name in DETAIL_TABLES}
    details["FLIGHT_GATE"] = [oracle_keeps(r) for r in inserts if r["FLID"] == "A"]
    assert flight_from_rows(oracle_keeps(plan.mains[0]), details) == a2
    # every message keeps its events, PROC_STATE row and snap-log row, in order
    assert [row["MESSAGE_ID"] for row in plan.procs] == [1, 2, 3]
    assert [(e["FLID"], e["STATE_VERSION"]) for e in plan.events] == [
        ("A", 1), ("A", 1), ("B", 1), ("B", 1), ("A", 2), ("A", 2),
    ]  # fmt: skip
    assert [row["MESSAGE_ID"] for row in plan.snaps] == [1, 2, 3]
    assert plan.cursor == 3


def test_a_re_send_writes_the_provenance_alone() -> None:
    """A flight whose stamps alone a message raised ("Late rows and provenance" in
    docs/design.md): one ``flight_stamps`` bind row, no MERGE row, no event, no detail."""
    a1, b1 = flight("A", 1, collections=_gates("G1")), flight("B", 1)
    resend = attrs.evolve(processed(2), stamped={"A": attrs.evolve(a1, provenance={"GTDT": 2})})
    plan = plan_writes([processed(1, b1), resend], {"A": a1, "B": None}, zone=ZONE, pivot=70)
    assert [row["FLID"] for row in plan.mains] == ["B"]
    assert plan.stamps == [{"FLID": "A", "PROVENANCE": '[[2,"GTDT"]]'}]
    assert all(row["FLID"] != "A" for _, rows in plan.details.values() for row in rows)
    assert [e["FLID"] for e in plan.events] == ["B", "B"]
    assert set(sql.FLIGHT_STAMPS.binds) == {"PROVENANCE"}  # a CLOB, never a VARCHAR2


def test_detail_tables_compare_with_the_state_before_the_batch() -> None:
    before = flight("A", 1)
    same_gates = flight("A", 2, scalars={"FFID": "CA-X"})
    new_gates = flight("A", 3, collections=_gates("G5"))
    back = flight("A", 4)  # gates back to what was stored: no detail write at all
    known = {"A": before}

    plan = plan_writes([processed(1, same_gates)], known, zone=ZONE, pivot=70)
    assert all(plan.details[name] == ([], []) for name in DETAIL_TABLES)

    plan = plan_writes([processed(1, same_gates), processed(2, new_gates)], known, zone=ZONE,
                       pivot=70)  # fmt: skip
    assert plan.details["FLIGHT_GATE"][0] == [{"FLID": "A"}]
    assert [r["GATE"] for r in plan.details["FLIGHT_GATE"][1]] == ["G5"]

    plan = plan_writes([processed(1, new_gates), processed(2, back)], known, zone=ZONE, pivot=70)
    assert plan.details["FLIGHT_GATE"] == ([], [])

    unknown = plan_writes([processed(1, new_gates)], {}, zone=ZONE, pivot=70)
    assert unknown.details["FLIGHT_GATE"][0] == [{"FLID": "A"}]  # not loaded: rewrite


def test_cursor_is_the_highest_and_optional() -> None:
    first, second = processed(5, flight("A")), processed(4, flight("B"))
    assert plan_writes([first, second], {}, zone=ZONE, pivot=70).cursor == 5
    none = attrs.evolve(second, cursor=None)
    assert plan_writes([none], {}, zone=ZONE, pivot=70).cursor is None


def test_a_bad_row_fails_the_plan_before_any_statement() -> None:
    bad = flight("A", 1, collections={"GTDT": ()})  # empty collection: not the normal form
    with pytest.raises(Exception, match="empty collection"):
        plan_writes([processed(1, flight("B")), processed(2, bad)], {}, zone=ZONE, pivot=70)


def test_chunks_and_in_list_binds() -> None:
    ids = [*range(1, 251), 7, 8]  # repeats are asked once
    chunks = chunked(ids)
    assert [len(c) for c in chunks] == [100, 100, 50]
    assert [i for c in chunks for i in c] == list(range(1, 251))
    params = in_params(chunks[2], "M")
    assert len(params) == sql.IN_LIST_SIZE
    assert (params["M1"], params["M50"], params["M51"], params["M100"]) == (201, 250, None, None)
    assert set(params) == set(sql.in_list_binds("M"))
    assert sql.PROC_IDS.binds["M100"] is Bind.NUMBER
    with pytest.raises(ValueError, match="at most"):
        in_params(list(range(101)))


def test_duplicate_pairs_are_bound_pairwise() -> None:
    keys = [("AODB|FLOP|GTDT|1", "d1"), ("AODB|SCHD|ADD|2", "d2")]
    params = duplicate_params(keys)
    assert len(params) == 2 * sql.IN_LIST_SIZE
    assert (params["K1"], params["D1"], params["K2"], params["D2"]) == (*keys[0], *keys[1])
    assert params["K3"] is None
    assert params["D100"] is None
    for i in range(1, sql.IN_LIST_SIZE + 1):
        assert f"(:K{i}, :D{i})" in sql.PROC_DUPLICATES.text
    with pytest.raises(ValueError, match="at most"):
        duplicate_params([("k", "d")] * 101)


def test_history_twins_repeat_every_column() -> None:
    for name in (MAIN_TABLE, *DETAIL_TABLES):
        table, twin = TABLES[name], TABLES[f"{name}_HIST"]
        assert twin.names == (*table.names, "ARCHIVED_AT")
        assert "EMPTY_CODES" in twin.names  # "" survives the archive
        archived = twin.column("ARCHIVED_AT")
        assert (archived.type_sql, archived.nullable) == ("TIMESTAMP(6)", False)  # ORA-02329
        assert twin.primary_key[:2] == ("FLID", "ARCHIVED_AT")
        statement = sql.ARCHIVE[name]
        assert statement.text.startswith(f"INSERT INTO {name}_HIST (")
        assert statement.binds == {"ARCHIVED_AT": Bind.TIMESTAMP}
    assert list(sql.REMOVE)[-1] == MAIN_TABLE  # details first: the cascade hides counts


def test_cleanup_candidate_binds() -> None:
    policy = RetentionPolicy(retention=timedelta(days=3), quiet_period=timedelta(days=2),
                             terminal_statuses=frozenset({"DEP", "ARR"}))  # fmt: skip
    params = cleanup_candidate_params(None, None, now=NOW, policy=policy, config=CONFIG, size=5)
    assert params["UNTIL_DAY"] == date(2026, 11, 26)  # 30 Nov (airport) - 3 - 1 days
    assert params["QUIET_BEFORE"] == datetime(2026, 11, 28, 1, 0)  # naive UTC
    assert (params["AFTER_DAY"], params["AFTER_FLID"], params["MAX_ROWS"]) == (None, None, 5)
    assert (params["S1"], params["S2"], params["S3"]) == ("ARR", "DEP", None)
    assert "ACTT IS NOT NULL" in sql.CLEANUP_DATED.text  # '' is NULL: no <> ''
    many = attrs.evolve(policy, terminal_statuses=frozenset(str(i) for i in range(101)))
    with pytest.raises(Exception, match="terminal statuses"):
        cleanup_candidate_params(None, None, now=NOW, policy=many, config=CONFIG, size=5)


def test_cleanup_events() -> None:
    states = {"A": flight("A", 3), "B": flight("B", 1, status=FlightStatus.DELETED)}
    plan = CleanupPlan(remove=("A", "B"), tombstone=("A",))
    rows = cleanup_event_rows(plan, states)
    assert [(r["TOPIC"], r["FLID"], r["STATE_VERSION"], r["KIND"]) for r in rows] == [
        ("schd", "A", 4, "TOMBSTONE"), ("msg", "A", 4, "NOTIFY"),
    ]  # fmt: skip
    assert rows[0]["PAYLOAD"] is None
    assert rows[0]["MESSAGE_ID"] is None
    body = json.loads(str(rows[1]["PAYLOAD"]))
    assert (body["change"], body["type"], body["styp"]) == ("DELETED", "LIFECYCLE", "CLEANUP")


def test_request_record_reads_utc() -> None:
    row = {"REQUEST_ID": 3, "WINDOW_START": datetime(2026, 11, 19, 16, 0),
           "WINDOW_END": datetime(2026, 11, 20, 15, 59), "SEQN": 999999,
           "SENT_AT": datetime(2026, 11, 30, 1, 0), "ATTEMPTS": 2, "STATUS": "OPEN",
           "ANSWERED_BY": None}  # fmt: skip
    record = request_record(row)
    assert record.window_start == datetime(2026, 11, 20, 0, 0, tzinfo=ZONE)
    assert (record.request_id, record.seqn, record.attempts) == (3, 999999, 2)
    assert (record.status, record.answered_by, record.sent_at) == (RequestStatus.OPEN, None, NOW)
    with pytest.raises(ValueError, match="NULL"):
        request_record({**row, "SENT_AT": None})


def test_snap_log_flid_match_is_exact() -> None:
    text = json.dumps(["15", "150", '航班"1'], ensure_ascii=False)
    assert snap_mentions(text, "15")
    assert snap_mentions(text, '航班"1')
    assert not snap_mentions(text, "1")  # the INSTR pre-filter would find it; this does not
    assert not snap_mentions(None, "15")
    assert json.dumps('航班"1', ensure_ascii=False) in text  # the INSTR needle is in the text


def test_republish_rows() -> None:
    live, gone = flight("A", 2), flight("D", 3, status=FlightStatus.DELETED)
    rows = republish_rows([live, gone], CONFIG, NOW)
    assert [(r["FLID"], r["STATE_VERSION"]) for r in rows] == [("A", 2), ("D", 3)]
    assert json.loads(str(rows[0]["PAYLOAD"]))["flid"] == "A"
    assert rows[1]["PAYLOAD"] is None  # a DELETED flight is republished as a tombstone
    assert rows[0]["CREATED_AT"] == datetime(2026, 11, 30, 1, 0)


def test_history_reads_whole_proc_rows() -> None:
    """PROCS_OF_MESSAGES selects every PROC_STATE column (times through SYS_EXTRACT_UTC),
    so ``proc_from_row`` (presence included) reads its rows as ``get_proc`` does."""
    selected = sql.PROCS_OF_MESSAGES.text.split(" FROM ")[0].removeprefix("SELECT ")
    expected = [
        f"SYS_EXTRACT_UTC({c.name}) AS {c.name}" if c.bind is Bind.TSTZ else c.name
        for c in TABLES["PROC_STATE"].columns
    ]
    assert selected.split(", ") == expected
    row: dict[str, object] = dict.fromkeys(TABLES["PROC_STATE"].names)
    row.update(
        MESSAGE_ID=9,
        STATUS="SUCCEEDED",
        ATTEMPTS=1,
        BACKFILL_ATTEMPTS=0,
        PROCESSED_AT=datetime(2026, 11, 30, 1, 0),
        MSG_STYP=None,
        EMPTY_CODES="MSG_STYP",
    )
    record = proc_from_row(row)
    assert (record.message_id, record.styp, record.processed_at) == (9, "", NOW)


def test_watermark_moves_over_the_leading_delivered_run_only() -> None:
    assert leading_run([5, 6, 7, 9], {5, 6, 9}) == 6  # 7 not reported: stop before it
    assert leading_run([5, 6], {5, 6, 40}) == 6
    assert leading_run([5, 6], {6}) is None  # the first undelivered row is not given
    assert leading_run([], {3}) is None
    assert "LAST_EVENT_ID < :THROUGH_ID" in sql.WATERMARK_ADVANCE.text  # never back
