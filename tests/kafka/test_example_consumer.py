"""examples/consumer.py: its SQLite projection under the consumer helper, real records."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from flightstate_kafka import KafkaSettings, ProjectionConsumer
from tests.fixtures.util import unique_name
from tests.kafka._consume import drain
from tests.kafka._outbox_db import EventModel, expected_projection, insert_rows

pytestmark = [pytest.mark.pg, pytest.mark.kafka]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "consumer.py"


def load_example() -> Any:
    spec = importlib.util.spec_from_file_location("example_consumer", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sqlite_projection_matches_outbox(
    tmp_path: Path, outbox_dsn: str, settings: KafkaSettings, make_dispatcher: Any
) -> None:
    example = load_example()
    insert_rows(outbox_dsn, EventModel(flids=25, seed=6).next_rows(150))
    drain(make_dispatcher())
    expected = expected_projection(outbox_dsn)
    projection = example.SqliteProjection(str(tmp_path / "flights.db"))
    conf = {"bootstrap.servers": settings.bootstrap_servers, "group.id": unique_name("ex")}
    consumer = ProjectionConsumer(conf, settings.topics["schd"], projection, subscribe=False)

    def table() -> dict[str, Any]:
        rows = projection.db.execute("SELECT flid, state_json FROM flight WHERE deleted = 0")
        return {flid: json.loads(state) for flid, state in rows}

    try:
        for _ in range(60):
            consumer.poll(0.5)
            if table() == expected:
                break
    finally:
        consumer.close()
    assert table() == expected
    assert projection.live_flights() == len(expected)
