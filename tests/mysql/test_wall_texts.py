"""The backfill's wall-clock texts: one conversion per distinct time, DST folds kept apart."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from flightstate_core.engine.operations import local_naive
from flightstate_mysql import inbox

SHANGHAI = ZoneInfo("Asia/Shanghai")
NEW_YORK = ZoneInfo("America/New_York")


def test_equal_times_from_different_rows_are_converted_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[datetime] = []

    def counting(value: datetime | None, zone: ZoneInfo) -> datetime | None:
        calls.append(value)  # type: ignore[arg-type]
        return local_naive(value, zone)

    monkeypatch.setattr(inbox, "local_naive", counting)
    wall = inbox._WallTexts(SHANGHAI)
    # As a store returns them: equal values, one object per row.
    rows = [datetime(2026, 11, 30, 1, 2, 3, 456, tzinfo=UTC) for _ in range(3)]
    assert len({id(row) for row in rows}) == 3
    assert [wall(row) for row in rows] == ["2026-11-30 09:02:03"] * 3
    assert len(calls) == 1
    assert wall(None) is None


def test_the_two_instants_of_a_fold_keep_their_own_wall_times() -> None:
    # 01:30 on 2026-11-01 happens twice in New York: EDT (05:30Z), then EST (06:30Z).
    first = datetime(2026, 11, 1, 1, 30, tzinfo=NEW_YORK)
    second = first.replace(fold=1)
    assert first == second  # equal within their zone, yet an hour apart
    wall = inbox._WallTexts(SHANGHAI)
    assert wall(first) == "2026-11-01 13:30:00"
    assert wall(second) == "2026-11-01 14:30:00"
    assert wall(first) == "2026-11-01 13:30:00"
