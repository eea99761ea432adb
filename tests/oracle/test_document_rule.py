"""The one document rule on Oracle's write path (pure: ``plan_writes`` builds every bind
row before a statement runs): a document item holding a code twice is refused, as on
PostgreSQL (tests/pg/test_document_rule.py), and the CLOBs hold the core's JSON text."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest

from flightstate_core.domain.errors import PermanentError
from flightstate_core.domain.items import DocItem
from flightstate_core.domain.write_plan import documents
from flightstate_core.testing.store_contract import flight, processed
from flightstate_oracle import _documents as oracle_documents
from flightstate_oracle._writes import plan_writes

ZONE = ZoneInfo("Asia/Shanghai")


def test_a_repeated_document_key_fails_the_plan() -> None:
    bad = flight("15", documents={"SRVT": (DocItem((("SRTC", "A"), ("SRTC", "B"))),)})
    for batch in ([processed(1, bad)], [processed(1, flight("14")), processed(2, bad)]):
        with pytest.raises(PermanentError, match=r"15/SRVT\[1\]: key 'SRTC' twice"):
            plan_writes(batch, {}, zone=ZONE, pivot=70)
    once = flight("15", documents={"SRVT": (DocItem((("SRTC", "A"), ("SRQT", "B"))),)})
    plan = plan_writes([processed(1, once)], {}, zone=ZONE, pivot=70)
    assert plan.mains[0]["SRVT"] == '[{"SRTC":"A","SRQT":"B"}]'


def test_the_clobs_hold_the_core_text() -> None:
    assert oracle_documents.encode_document is documents.encode_document
    assert oracle_documents.decode_document is documents.decode_document
