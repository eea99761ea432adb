"""Shared helpers for the core tests: a checked ``decide`` and small state builders.

``run`` is the only way the tests call ``decide``: it asserts, for every decision, that
each ``schd`` payload is exactly ``wire(next_state)`` (or a tombstone for a DELETED
flight), that every event validates against the JSON Schemas, and that versions move by
exactly one per changed flight.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, date, datetime
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import Decision, DecisionContext, EventKind, OutboxEvent
from flightstate_core.domain.handlers import decide
from flightstate_core.domain.items import DocItem, Item
from flightstate_core.domain.messages import Message
from flightstate_core.domain.state import FlightState, FlightStatus
from flightstate_core.domain.wire import wire

CONFIG = CoreConfig()
NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
SCHEMAS = Path(__file__).resolve().parents[2] / "flightstate_core" / "schemas"


@cache
def validator(name: str) -> jsonschema.protocols.Validator:
    """A format-checking validator for ``schd`` or ``msg``."""
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def check_events(
    events: tuple[OutboxEvent, ...], states: Mapping[str, FlightState], config: CoreConfig = CONFIG
) -> None:
    """schd payload == wire(next_state) (or tombstone); every event matches its schema."""
    for event in events:
        if event.topic == "schd":
            state = states[event.flid]
            assert event.key == event.flid == state.flid
            assert event.state_version == state.version
            if state.is_deleted:
                assert event.payload is None
                assert event.kind is EventKind.TOMBSTONE
            else:
                assert event.payload == wire(state, config)
                assert event.kind is EventKind.SNAPSHOT
                validator("schd").validate(json.loads(event.payload))
        else:
            assert event.topic == "msg"
            assert event.payload is not None
            body = json.loads(event.payload)
            validator("msg").validate(body)
            assert body["flid"] == event.key == event.flid
            assert body["stateVersion"] == event.state_version


def check_decision(
    current: Mapping[str, FlightState], decision: Decision, config: CoreConfig = CONFIG
) -> None:
    """Version, audit and event invariants of one decision."""
    for flid, state in decision.states.items():
        before = current.get(flid)
        assert state.version == (before.version + 1 if before else 1)
        assert before is None or not state.content_equals(before)
        assert state.updated_at == NOW
    schd = [e.flid for e in decision.events if e.topic == "schd"]
    assert sorted(schd) == sorted(decision.states)
    assert len([e for e in decision.events if e.topic == "msg"]) == len(schd)
    check_events(decision.events, decision.states, config)
    if decision.outcome.value != "SUCCEEDED":
        assert not decision.states
        assert not decision.events


def run(
    current: Mapping[str, FlightState],
    message: Message,
    *,
    mid: int = 1,
    config: CoreConfig = CONFIG,
) -> Decision:
    """decide + every consistency check."""
    decision = decide(current, message, config, DecisionContext(mid, NOW))
    check_decision(current, decision, config)
    return decision


def apply(
    current: dict[str, FlightState], message: Message, *, mid: int = 1, config: CoreConfig = CONFIG
) -> Decision:
    """run, then fold the decision's states into ``current``."""
    decision = run(current, message, mid=mid, config=config)
    current.update(decision.states)
    return decision


def flight(
    flid: str,
    *,
    version: int = 1,
    day: date | None = None,
    deleted: bool = False,
    collections: Mapping[str, tuple[Item, ...]] | None = None,
    documents: Mapping[str, tuple[DocItem, ...]] | None = None,
    **scalars: str,
) -> FlightState:
    """A stored flight."""
    return FlightState(
        flid,
        FlightStatus.DELETED if deleted else FlightStatus.ACTIVE,
        version,
        day,
        dict(scalars),
        dict(collections or {}),
        dict(documents or {}),
        last_message_id=0,
        created_at=NOW,
        updated_at=NOW,
    )


def msgs(decision: Decision) -> list[dict[str, Any]]:
    """Decoded msg payloads in order."""
    return [json.loads(e.payload or b"") for e in decision.events if e.topic == "msg"]


def seqs(items: tuple[Item, ...] | None) -> list[tuple[int, str | None]]:
    """(ordinal, seq) of items."""
    return [(i.ordinal, i.seq) for i in items or ()]
