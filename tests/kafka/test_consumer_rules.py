"""Staleness rules of the consumer helper on a dict projection (pure)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from flightstate_kafka.consumer import DictProjection, SchdRecord, Seen, apply_record, is_newer

T0 = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)


def snap(flid: str, version: int, minutes: int = 0) -> SchdRecord:
    at = T0 + timedelta(minutes=minutes)
    state = {"flid": flid, "stateVersion": version, "updatedAt": at.isoformat()}
    return SchdRecord(flid, Seen(version, at, deleted=False), state)


def tomb(flid: str, version: int) -> SchdRecord:
    return SchdRecord(flid, Seen(version, None, deleted=True), None)


def test_newer_version_replaces_and_redelivery_is_ignored() -> None:
    proj = DictProjection()
    assert apply_record(proj, snap("A", 1))
    assert apply_record(proj, snap("A", 2))
    assert not apply_record(proj, snap("A", 2))  # redelivery
    assert not apply_record(proj, snap("A", 1))  # stale
    assert proj.flights["A"]["stateVersion"] == 2


def test_tombstone_removes_and_stale_snapshot_does_not_revive() -> None:
    proj = DictProjection()
    apply_record(proj, snap("A", 3))
    assert apply_record(proj, tomb("A", 4))
    assert "A" not in proj.flights
    assert not apply_record(proj, snap("A", 3))
    assert not apply_record(proj, tomb("A", 4))
    assert "A" not in proj.flights
    assert apply_record(proj, snap("A", 5))  # a real revival has a higher version
    assert proj.flights["A"]["stateVersion"] == 5


def test_same_version_ordered_by_updated_at() -> None:
    assert is_newer(snap("A", 2, 5).seen, snap("A", 2, 1).seen)
    assert not is_newer(snap("A", 2, 1).seen, snap("A", 2, 5).seen)
    assert is_newer(tomb("A", 2).seen, snap("A", 2).seen)
    assert not is_newer(snap("A", 2, 9).seen, tomb("A", 2).seen)
