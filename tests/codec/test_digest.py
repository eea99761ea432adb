"""The payload digest ignores layout and changes with any value (see codec._digest)."""

from __future__ import annotations

import re

import pytest

from flightstate_core.domain.codec import decode
from flightstate_testing.sis import flop
from flightstate_testing.sis import message as msg
from tests.codec.test_corpus import CORPUS_DIR


def _digest(raw: str | bytes) -> str:
    return decode(raw).payload_digest


def test_layout_does_not_change_the_digest() -> None:
    original = (CORPUS_DIR / "SCHD_DNLD_01.xml").read_text(encoding="utf-8")
    compact = re.sub(r">\s+<", "><", original)
    spaced = original.replace('RTNO = "1"', "RTNO='1'   ").replace("<ROUT ", "<ROUT\n\t ")
    other_envelope = original.replace("<SEQN>345935</SEQN>", "<SEQN>1</SEQN>")
    digests = {_digest(text) for text in (original, compact, spaced, other_envelope)}
    assert len(digests) == 1
    assert re.fullmatch(r"[0-9a-f]{64}", digests.pop())


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("<REMC></REMC>", "<REMC/>"),
        ("<REMC>A&amp;B</REMC>", "<REMC>A&#38;B</REMC>"),
        ("<REMC>x<!-- note --></REMC>", "<REMC>x</REMC>"),
    ],
)
def test_equivalent_forms_share_a_digest(left: str, right: str) -> None:
    assert _digest(flop("REMC", left)) == _digest(flop("REMC", right))


def test_attribute_order_and_quoting_do_not_matter() -> None:
    left = flop("FDIV", '<FDIV DDES="HKG" DDIR="TO">X</FDIV>')
    right = flop("FDIV", "<FDIV DDIR='TO'  DDES = 'HKG' >X</FDIV>")
    assert _digest(left) == _digest(right)


@pytest.mark.parametrize(
    "changed",
    [
        "<REMC>Bag loading delay</REMC>",
        "<REMC>Bag loading Delay </REMC>",
        "<REMC> </REMC>",
        "<REMC></REMC>",
    ],
)
def test_any_value_change_changes_the_digest(changed: str) -> None:
    base = _digest(flop("REMC", "<REMC>Bag loading Delay</REMC>"))
    assert _digest(flop("REMC", changed)) != base


def test_seq_order_flid_and_reference_data_changes() -> None:
    gate = '<GTDT GTNO="{}"><GATE>{}</GATE></GTDT>'
    one = flop("GTDT", gate.format(1, "G1") + gate.format(2, "G2"))
    assert _digest(one) != _digest(flop("GTDT", gate.format(1, "G1") + gate.format(3, "G2")))
    assert _digest(one) != _digest(flop("GTDT", gate.format(2, "G2") + gate.format(1, "G1")))
    assert _digest(one) != _digest(flop("GTDT", gate.format(1, "G1") + gate.format(2, "G2"), "16"))
    city = msg("CITY", "ADD", "<RECS>1</RECS><CITY><CODE>PEK</CODE></CITY>")
    assert _digest(city) != _digest(city.replace("PEK", "PVG"))
    assert _digest(city) != _digest(city.replace("<RECS>1</RECS>", ""))


def test_relative_namespace_uri_still_gets_a_digest() -> None:
    plain = msg("CITY", "ADD", "<CITY><CODE>PEK</CODE></CITY>")
    odd = plain.replace("<MSG>", '<MSG xmlns:a="relative">')
    assert len(_digest(odd)) == 64
    assert _digest(odd) != _digest(odd.replace("PEK", "PVG"))
    assert _digest(odd) == _digest(odd.replace("<CODE>PEK", "\n  <CODE>PEK"))
