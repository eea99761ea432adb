"""Envelope and indexed values are bounded in the codec (docs/design.md, "Poison-proof bounds")."""

from __future__ import annotations

import pytest

from flightstate_core.domain.codec import decode, decode_envelope
from flightstate_core.domain.errors import ProtocolError
from flightstate_core.domain.limits import (
    ENVELOPE_TEXT_MAX_BYTES,
    IDENTITY_KEY_MAX_BYTES,
    bounded_display,
    bounded_key,
    utf8_len,
)
from flightstate_core.domain.messages import Envelope
from tests.codec.oversize import AT_LIMIT_CASES, OVERSIZE_CASES

_IDS = [case[0] for case in OVERSIZE_CASES]


@pytest.mark.parametrize(("name", "raw", "xpath"), OVERSIZE_CASES, ids=_IDS)
def test_over_long_or_out_of_range_values_are_protocol_errors(
    name: str, raw: str, xpath: str
) -> None:
    with pytest.raises(ProtocolError) as caught:
        decode(raw)
    assert caught.value.xpath == xpath, name
    # the reason states a size or range, never the whole value
    assert len(str(caught.value)) < 200


@pytest.mark.parametrize(("name", "raw"), AT_LIMIT_CASES, ids=[c[0] for c in AT_LIMIT_CASES])
def test_values_at_their_limits_decode(name: str, raw: str) -> None:
    assert decode(raw).envelope.identity_key


def test_an_over_long_envelope_has_no_envelope_for_the_dead_record() -> None:
    raw = next(raw for name, raw, _ in OVERSIZE_CASES if name == "sndr_6000")
    with pytest.raises(ProtocolError, match="SNDR is 6000 bytes, over 64"):
        decode_envelope(raw)


def test_a_field_error_keeps_the_envelope() -> None:
    raw = next(raw for name, raw, _ in OVERSIZE_CASES if name == "flop_flid_2705")
    assert decode_envelope(raw).seqn == "1243"


def test_identity_key_built_elsewhere_is_bounded_by_a_hash() -> None:
    envelope = Envelope("S" * 5000, "1" * 400, "20211010090311", "FLOP", "REMC")
    key = envelope.identity_key
    assert key.startswith("sha256:")
    assert utf8_len(key) <= IDENTITY_KEY_MAX_BYTES
    same = Envelope("S" * 5000, "1" * 400, "20211010090311", "FLOP", "REMC")
    other = Envelope("S" * 5000, "1" * 399, "20211010090311", "FLOP", "REMC")
    assert same.identity_key == key != other.identity_key
    assert Envelope("AODB", "1", "x", "FLOP", "REMC").identity_key == "AODB|FLOP|REMC|1"
    assert bounded_key("k") == "k"


def test_display_values_are_cut_on_a_character_boundary() -> None:
    cut = bounded_display("航" * 30, ENVELOPE_TEXT_MAX_BYTES)
    assert cut is not None
    assert utf8_len(cut) <= ENVELOPE_TEXT_MAX_BYTES
    assert cut.endswith("...")
    assert cut.startswith("航" * 20)
    assert bounded_display("DNLD", ENVELOPE_TEXT_MAX_BYTES) == "DNLD"
    assert bounded_display(None, 4) is None
