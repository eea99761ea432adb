"""The one document rule on PostgreSQL's write path (real server): a state whose document
item holds a code twice is refused before anything is written, and the document columns
hold the core's JSON text (``flightstate_core.domain.write_plan.documents``)."""

from __future__ import annotations

import pytest

import flightstate_pg
from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.errors import PermanentError
from flightstate_core.domain.items import DocItem
from flightstate_core.domain.records import ProcessedMessage
from flightstate_core.domain.write_plan import documents
from flightstate_core.testing.store_contract import flight, processed
from flightstate_pg import PgStore, _documents

pytestmark = pytest.mark.pg


def _save(store: PgStore, batch: list[ProcessedMessage]) -> None:
    with store.transaction() as tx:
        tx.lock_pipeline(0)
        tx.load_flights([flid for message in batch for flid in message.states])
        tx.save_many(batch)


def test_a_repeated_document_key_is_refused_and_nothing_is_written(pg_db: str) -> None:
    flightstate_pg.migrate(pg_db)
    store = PgStore(pg_db, CoreConfig())
    bad = flight("15", documents={"SRVT": (DocItem((("SRTC", "A"), ("SRTC", "B"))),)})
    try:
        for batch in ([processed(1, bad)], [processed(1, flight("14")), processed(2, bad)]):
            with pytest.raises(PermanentError, match=r"15/SRVT\[1\]: key 'SRTC' twice"):
                _save(store, batch)
        assert store.get_flights(["14", "15"]) == {}
        once = flight("15", documents={"SRVT": (DocItem((("SRTC", "A"), ("SRQT", "B"))),)})
        _save(store, [processed(3, once)])
        assert store.get_flights(["15"]) == {"15": once}
    finally:
        store.close()


def test_the_columns_hold_the_core_text() -> None:
    assert _documents.encode_document is documents.encode_document
    assert _documents.decode_document is documents.decode_document
