"""The inbox contract: one test class every ``Inbox`` adapter subclasses in a few lines.

A subclass provides the ``inbox_harness`` fixture: an ``InboxHarness`` over an empty inbox
table whose adapter uses ``local_tz = Asia/Shanghai``. The tests check the guarantees the
pump relies on: strict id order after a cursor, paging, fresh reads (no stale snapshot),
reads that never modify a row, and an idempotent backfill that never touches the message.
"""

# ruff: noqa: S101, PLR2004, RUF001 - a pytest contract: assert, literal expectations, CJK text

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Protocol

from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.records import BackfillIntent
from flightstate_core.engine.budget import ReadBudget
from flightstate_core.ports import GapReader, Inbox

__all__ = ["InboxContract", "InboxHarness"]

#: Column keys ``InboxHarness.row`` returns (upper case, without the CMINMSGS_ prefix).
ROW_KEYS = (
    "CLOB_MSG",
    "STATUS",
    "DATE_PROCESSED",
    "SUBSYSTEM_NAME",
    "SUBSYSTEM_SEQUENCE",
    "SUBSYSTEM_DATE_SENT",
    "SUBSYSTEM_TYPE",
    "SUBSYSTEM_SUBTYPE",
)

_PROCESSED = datetime(2026, 11, 30, 1, 2, 3, 456000, tzinfo=UTC)
_PROCESSED_LOCAL = datetime(2026, 11, 30, 9, 2, 3)  # Asia/Shanghai, whole seconds


class InboxHarness(Protocol):
    """What a backend's test gives the contract."""

    inbox: Inbox

    def insert(self, raws: Sequence[str]) -> list[int]:
        """Insert raw messages as new VALID rows, in order; their ids."""

    def row(self, message_id: int) -> Mapping[str, object]:
        """The row's columns by ``ROW_KEYS`` (naive datetimes as stored)."""

    def count(self) -> int:
        """How many rows the table holds."""

    def budgeted(self, budget: ReadBudget) -> Inbox:
        """Another adapter over the same table, reading within *budget* (closed with the
        harness)."""


def _intent(message_id: int, status: Outcome = Outcome.SUCCEEDED) -> BackfillIntent:
    return BackfillIntent(
        message_id=message_id,
        status=status,
        processed_at=_PROCESSED,
        subsystem_name="AODB",
        subsystem_type="FLOP",
        subsystem_subtype="ESTT",
        subsystem_sequence=345935,
        subsystem_date_sent=datetime(2018, 11, 5, 22, 31, 26),
    )


class InboxContract:
    """Tests every inbox adapter passes (subclass and provide ``inbox_harness``)."""

    def test_empty_inbox_reads_nothing(self, inbox_harness: InboxHarness) -> None:
        assert inbox_harness.inbox.read_after(0, 10) == []

    def test_reads_in_id_order_after_cursor(self, inbox_harness: InboxHarness) -> None:
        ids = inbox_harness.insert([f"<MSG>{n}</MSG>" for n in range(5)])
        assert ids == sorted(ids)
        rows = inbox_harness.inbox.read_after(ids[1], 10)
        assert [r.message_id for r in rows] == ids[2:]
        assert [r.raw for r in rows] == ["<MSG>2</MSG>", "<MSG>3</MSG>", "<MSG>4</MSG>"]

    def test_pages_cover_every_row_once(self, inbox_harness: InboxHarness) -> None:
        ids = inbox_harness.insert([f"<MSG>{n}</MSG>" for n in range(7)])
        seen: list[int] = []
        cursor = 0
        while page := inbox_harness.inbox.read_after(cursor, 3):
            assert len(page) <= 3
            seen.extend(r.message_id for r in page)
            cursor = page[-1].message_id
        assert seen == ids

    def test_rows_inserted_later_are_seen(self, inbox_harness: InboxHarness) -> None:
        first = inbox_harness.insert(["<MSG>a</MSG>"])
        assert [r.message_id for r in inbox_harness.inbox.read_after(0, 10)] == first
        second = inbox_harness.insert(["<MSG>b</MSG>"])
        assert [r.message_id for r in inbox_harness.inbox.read_after(first[0], 10)] == second

    def test_read_never_modifies_a_row(self, inbox_harness: InboxHarness) -> None:
        (mid,) = inbox_harness.insert(["<MSG>x</MSG>"])
        inbox_harness.inbox.read_after(0, 10)
        row = inbox_harness.row(mid)
        assert row["STATUS"] == "VALID"
        assert row["DATE_PROCESSED"] is None
        assert row["SUBSYSTEM_TYPE"] is None

    def test_text_round_trips_exactly(self, inbox_harness: InboxHarness) -> None:
        raw = "<MSG><REMC> 备注：延误 \U0001f6eb </REMC>\r\n<X/></MSG>"
        (mid,) = inbox_harness.insert([raw])
        (row,) = inbox_harness.inbox.read_after(mid - 1, 1)
        assert row.raw == raw
        assert row.received_at is not None
        assert row.received_at.tzinfo is not None

    def test_a_row_just_written_was_received_just_now(self, inbox_harness: InboxHarness) -> None:
        """DATE_RECEIVED is the inbox server's clock, read back on this host's: whatever
        the server's zone, a row written now is seconds old, not hours."""
        (mid,) = inbox_harness.insert(["<MSG>now</MSG>"])
        (row,) = inbox_harness.inbox.read_after(mid - 1, 1)
        assert row.received_at is not None
        assert abs((datetime.now(UTC) - row.received_at).total_seconds()) < 120

    def test_backfill_writes_outcome_and_subsystem(self, inbox_harness: InboxHarness) -> None:
        ids = inbox_harness.insert(["<MSG>1</MSG>", "<MSG>2</MSG>"])
        inbox_harness.inbox.backfill([_intent(ids[0]), _intent(ids[1], Outcome.DEAD)])
        first, second = inbox_harness.row(ids[0]), inbox_harness.row(ids[1])
        assert first["STATUS"] == "SUCCEEDED"
        assert second["STATUS"] == "DEAD"
        assert first["DATE_PROCESSED"] == _PROCESSED_LOCAL
        assert first["SUBSYSTEM_NAME"] == "AODB"
        assert first["SUBSYSTEM_TYPE"] == "FLOP"
        assert first["SUBSYSTEM_SUBTYPE"] == "ESTT"
        assert first["SUBSYSTEM_SEQUENCE"] == 345935
        assert first["SUBSYSTEM_DATE_SENT"] == datetime(2018, 11, 5, 22, 31, 26)
        assert first["CLOB_MSG"] == "<MSG>1</MSG>"

    def test_backfill_writes_each_rows_own_local_times(self, inbox_harness: InboxHarness) -> None:
        """Intents share one processing time object and carry aware send times in another
        zone: each row gets its own send time as airport wall clock, whole seconds."""
        ids = inbox_harness.insert([f"<MSG>{n}</MSG>" for n in range(3)])
        sent = [datetime(2026, 3, 1, 23, 59, 58, 999_999, tzinfo=UTC) + timedelta(seconds=n)
                for n in range(3)]  # fmt: skip
        intents = [
            BackfillIntent(message_id=mid, status=Outcome.SUCCEEDED, processed_at=_PROCESSED,
                           subsystem_date_sent=at)
            for mid, at in zip(ids, sent, strict=True)
        ]  # fmt: skip
        inbox_harness.inbox.backfill(intents)
        rows = [inbox_harness.row(mid) for mid in ids]
        assert [row["SUBSYSTEM_DATE_SENT"] for row in rows] == [
            datetime(2026, 3, 2, 7, 59, 58), datetime(2026, 3, 2, 7, 59, 59),
            datetime(2026, 3, 2, 8, 0, 0),
        ]  # fmt: skip
        assert {row["DATE_PROCESSED"] for row in rows} == {_PROCESSED_LOCAL}

    def test_backfill_is_idempotent(self, inbox_harness: InboxHarness) -> None:
        (mid,) = inbox_harness.insert(["<MSG>1</MSG>"])
        inbox_harness.inbox.backfill([_intent(mid)])
        once = dict(inbox_harness.row(mid))
        inbox_harness.inbox.backfill([_intent(mid)])
        assert dict(inbox_harness.row(mid)) == once
        assert inbox_harness.count() == 1

    def test_backfill_touches_only_its_rows(self, inbox_harness: InboxHarness) -> None:
        ids = inbox_harness.insert(["<MSG>1</MSG>", "<MSG>2</MSG>"])
        inbox_harness.inbox.backfill([_intent(ids[1], Outcome.IGNORED)])
        assert inbox_harness.row(ids[0])["STATUS"] == "VALID"
        assert inbox_harness.row(ids[1])["STATUS"] == "IGNORED"
        assert [r.raw for r in inbox_harness.inbox.read_after(0, 10)] == [
            "<MSG>1</MSG>",
            "<MSG>2</MSG>",
        ]

    def test_backfill_without_subsystem_values(self, inbox_harness: InboxHarness) -> None:
        (mid,) = inbox_harness.insert(["not xml"])
        intent = BackfillIntent(message_id=mid, status=Outcome.DEAD, processed_at=_PROCESSED)
        inbox_harness.inbox.backfill([intent])
        row = inbox_harness.row(mid)
        assert row["STATUS"] == "DEAD"
        assert row["SUBSYSTEM_TYPE"] is None
        assert row["SUBSYSTEM_SEQUENCE"] is None

    def test_backfill_cuts_values_to_column_size(self, inbox_harness: InboxHarness) -> None:
        (mid,) = inbox_harness.insert(["<MSG/>"])
        intent = BackfillIntent(
            message_id=mid,
            status=Outcome.DEAD,
            processed_at=_PROCESSED,
            subsystem_name="TOOLONG",
            subsystem_type="SCHDX",
        )
        inbox_harness.inbox.backfill([intent])
        row = inbox_harness.row(mid)
        assert (row["SUBSYSTEM_NAME"], row["SUBSYSTEM_TYPE"]) == ("TOOL", "SCHD")

    def test_backfill_of_nothing_is_a_no_op(self, inbox_harness: InboxHarness) -> None:
        inbox_harness.inbox.backfill([])
        assert inbox_harness.count() == 0

    # ---- the gap reads (GapReader): by primary key, bounded
    def test_read_ranges_returns_rows_inside_the_ranges_only(
        self, inbox_harness: InboxHarness
    ) -> None:
        inbox = inbox_harness.inbox
        assert isinstance(inbox, GapReader)
        ids = inbox_harness.insert([f"<MSG>{n}</MSG>" for n in range(8)])
        ranges = [(ids[1], ids[2]), (ids[5], ids[5]), (ids[7] + 1, ids[7] + 100)]
        rows = inbox.read_ranges(ranges, 10)
        assert [r.message_id for r in rows] == [ids[1], ids[2], ids[5]]
        assert rows[0].raw == "<MSG>1</MSG>"
        assert [r.message_id for r in inbox.read_ranges(ranges, 2)] == [ids[1], ids[2]]
        assert inbox.read_ranges([], 10) == []

    def test_read_unprocessed_skips_backfilled_rows(self, inbox_harness: InboxHarness) -> None:
        inbox = inbox_harness.inbox
        assert isinstance(inbox, GapReader)
        ids = inbox_harness.insert([f"<MSG>{n}</MSG>" for n in range(5)])
        inbox.backfill([_intent(ids[1]), _intent(ids[3])])
        rows = inbox.read_unprocessed(ids[0], ids[4], 10)
        assert [r.message_id for r in rows] == [ids[2], ids[4]]  # (after, upto]
        assert [r.message_id for r in inbox.read_unprocessed(ids[0] - 1, ids[4], 1)] == [ids[0]]

    def test_reads_are_capped_by_bytes_as_well_as_rows(self, inbox_harness: InboxHarness) -> None:
        raws = [f"<MSG>{n}{'航' * 300}</MSG>" for n in range(5)]  # 912 bytes each
        ids = inbox_harness.insert(raws)
        inbox = inbox_harness.budgeted(ReadBudget(max_bytes=2000))
        pages: list[list[int]] = []
        cursor = 0
        while page := inbox.read_after(cursor, 10):
            pages.append([r.message_id for r in page])
            assert [r.raw for r in page] == raws[ids.index(page[0].message_id) :][: len(page)]
            cursor = page[-1].message_id
        assert pages == [ids[0:2], ids[2:4], ids[4:5]]
        tiny = inbox_harness.budgeted(ReadBudget(max_bytes=10))  # one row always moves
        assert [r.message_id for r in tiny.read_after(0, 10)] == ids[:1]

    def test_an_over_limit_row_is_measured_not_read(self, inbox_harness: InboxHarness) -> None:
        big = "<MSG>" + "航" * 1000 + "</MSG>"  # 3,011 bytes, 1,011 characters
        ids = inbox_harness.insert(["<MSG>a</MSG>", big, "<MSG>b</MSG>"])
        inbox = inbox_harness.budgeted(ReadBudget(max_bytes=100, max_message_bytes=2000))
        rows = inbox.read_after(0, 10)
        assert [r.message_id for r in rows] == ids  # the unread row costs no budget
        assert [r.raw for r in rows] == ["<MSG>a</MSG>", "", "<MSG>b</MSG>"]
        assert [r.size for r in rows] == [None, len(big.encode("utf-8")), None]
        assert rows[1].received_at is not None
