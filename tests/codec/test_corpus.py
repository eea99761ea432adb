"""The SIS sample corpus as table-driven cases: every file has an explicit expectation.

Flight messages (SCHD, FLOP) and SCHS decode to their kind; reference data is recognised;
the broken samples of docs/protocol.md §10 raise ``ProtocolError`` naming the element.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from attrs import frozen

from flightstate_core.domain.codec import decode, decode_envelope, encode
from flightstate_core.domain.errors import ProtocolError
from flightstate_core.domain.messages import (
    FlopMessage,
    ReferenceDataMessage,
    ScheduleMessage,
    ScheduleSeasonMessage,
)

try:
    from tests.fixtures.corpus import CORPUS_DIR, read_index
except ImportError:  # the shared fixture module is optional for this package
    import csv

    CORPUS_DIR = Path(
        os.environ.get("FLIGHTSTATE_CORPUS_DIR")
        or Path(__file__).resolve().parents[2].parent / "shared" / "sis-corpus"
    )

    def read_index(corpus_dir: Path = CORPUS_DIR) -> list[dict[str, str]]:
        with (corpus_dir / "INDEX.tsv").open(encoding="utf-8", newline="") as handle:
            return list(csv.DictReader(handle, delimiter="\t"))


@frozen
class Err:
    """Expected ProtocolError: xpath equal to ``xpath``, reason containing ``reason``."""

    xpath: str
    reason: str


FLOP = FlopMessage
SCHD = ScheduleMessage
SCHS = ScheduleSeasonMessage
REF = ReferenceDataMessage

EXPECTED: dict[str, type | Err] = {
    "ABDG_ADD_01.xml": REF,
    "ABDG_DEL_01.xml": REF,
    "ABDG_DEL_02.xml": REF,
    "ABDG_DNLD_01.xml": REF,
    "ABDG_RESP_01.xml": REF,
    "ABDG_RESP_02.xml": REF,
    "ABDG_UPD_01.xml": REF,
    "ABDG_UPD_02.xml": REF,
    "ABDG_UPD_03.xml": REF,
    "ABNR_ADD_01.xml": Err("/", "line 17, column 2"),
    "ABNR_DEL_01.xml": REF,
    "ABNR_DNLD_01.xml": REF,
    "ABNR_RESP_01.xml": REF,
    "ABNR_UPD_01.xml": REF,
    "AIRC_ADD_01.xml": REF,
    "AIRC_DEL_01.xml": REF,
    "AIRC_DNLD_01.xml": REF,  # RECS 1, two records: noted (test_reference_recs_mismatch)
    "AIRL_ADD_01.xml": REF,
    "AIRL_DEL_01.xml": REF,
    "AIRL_DNLD_01.xml": REF,
    "ARPT_ADD_01.xml": REF,
    "ARPT_DEL_01.xml": REF,
    "ARPT_DNLD_01.xml": REF,
    "BLST_ADD_01.xml": REF,
    "BLST_DEL_01.xml": REF,
    "BLST_DNLD_01.xml": REF,
    "CHLT_ADD_01.xml": REF,
    "CHLT_DEL_01.xml": REF,
    "CHLT_DNLD_01.xml": REF,
    "CITY_ADD_01.xml": REF,
    "CITY_DEL_01.xml": REF,
    "CITY_DNLD_01.xml": REF,
    "CLST_ADD_01.xml": REF,
    "CLST_DEL_01.xml": REF,
    "CLST_DNLD_01.xml": REF,
    "COUL_ADD_01.xml": REF,
    "COUL_DEL_01.xml": REF,
    "COUL_DNLD_01.xml": REF,
    "COUL_RESP_01.xml": REF,
    "COUL_UPD_01.xml": REF,
    "DLYL_ADD_01.xml": REF,
    "DLYL_DEL_01.xml": REF,
    "DLYL_DNLD_01.xml": REF,
    "DLYL_RESP_01.xml": REF,
    "DLYL_UPD_01.xml": REF,
    "FLOP_ABTM_01.xml": FLOP,
    "FLOP_ACFT_01.xml": FLOP,
    "FLOP_APPT_01.xml": FLOP,
    "FLOP_APPT_02.xml": FLOP,
    "FLOP_BOTM_01.xml": FLOP,
    "FLOP_BOTM_02.xml": FLOP,
    "FLOP_CHDT_01.xml": FLOP,
    "FLOP_CHOT_01.xml": FLOP,
    "FLOP_CKDT_01.xml": FLOP,
    "FLOP_CLDT_01.xml": FLOP,
    "FLOP_CNCL_01.xml": FLOP,
    "FLOP_CNCL_02.xml": FLOP,
    "FLOP_COBT_01.xml": FLOP,
    "FLOP_CTOT_01.xml": FLOP,
    "FLOP_DELY_01.xml": FLOP,
    "FLOP_DELY_02.xml": FLOP,
    "FLOP_EGSR_01.xml": FLOP,
    "FLOP_EGSR_02.xml": FLOP,
    "FLOP_EGST_01.xml": FLOP,
    "FLOP_EGST_02.xml": FLOP,
    "FLOP_EOBT_01.xml": FLOP,
    "FLOP_ERUT_01.xml": FLOP,
    "FLOP_ERUT_02.xml": FLOP,
    "FLOP_EXSS_01.xml": FLOP,
    "FLOP_FDEL_01.xml": FLOP,
    "FLOP_FDIV_01.xml": FLOP,
    "FLOP_FDIV_02.xml": FLOP,
    "FLOP_FDIV_03.xml": Err("/MSG/FLOP[1]/FDIV/@DDIR", "TOO"),
    "FLOP_FDIV_04.xml": Err("/MSG/FLOP[1]/FDIV/@DDIR", "empty"),
    "FLOP_FINT_01.xml": FLOP,
    "FLOP_FINT_02.xml": FLOP,
    "FLOP_FLAB_01.xml": FLOP,
    "FLOP_FLAB_02.xml": FLOP,
    "FLOP_FLAB_03.xml": FLOP,
    "FLOP_FLIN_01.xml": FLOP,
    "FLOP_FLTY_01.xml": FLOP,
    "FLOP_FRET_01.xml": FLOP,
    "FLOP_FRET_02.xml": FLOP,
    "FLOP_FRET_03.xml": FLOP,
    "FLOP_FTSS_01.xml": FLOP,
    "FLOP_GTDT_01.xml": FLOP,
    "FLOP_HNAG_01.xml": FLOP,
    "FLOP_HNAG_02.xml": FLOP,
    "FLOP_IEST_01.xml": FLOP,
    "FLOP_LACL_01.xml": FLOP,
    "FLOP_LACL_02.xml": FLOP,
    "FLOP_MAXP_01.xml": FLOP,
    "FLOP_NAAT_01.xml": FLOP,
    "FLOP_NEAT_01.xml": FLOP,
    "FLOP_PADT_01.xml": FLOP,
    "FLOP_PEDT_01.xml": FLOP,
    "FLOP_PORT_01.xml": FLOP,
    "FLOP_PSDT_01.xml": FLOP,
    "FLOP_PSHT_01.xml": FLOP,
    "FLOP_REMC_01.xml": FLOP,
    "FLOP_RENO_01.xml": FLOP,
    "FLOP_RUNW_01.xml": FLOP,
    "FLOP_SRVT_01.xml": FLOP,
    "FLOP_SRVT_02.xml": FLOP,
    "FLOP_SRVT_03.xml": FLOP,
    "FLOP_STND_01.xml": FLOP,
    "FLOP_TAOP_01.xml": FLOP,
    "FLOP_TAOP_02.xml": FLOP,
    "FLOP_TIPT_01.xml": FLOP,
    "FLOP_TOBT_01.xml": Err("/MSG/FLOP[1]/TOBT", "none of TOBT"),
    "FLOP_TRML_01.xml": FLOP,
    "FLOP_VIPF_01.xml": FLOP,
    "FLOP_VIPP_01.xml": FLOP,
    "FLOP_VIPP_02.xml": FLOP,
    "FLOP_VIPP_03.xml": FLOP,
    "FLOP_VIPP_04.xml": FLOP,
    "FLTL_ADD_01.xml": REF,  # RECS 2, one record: noted
    "FLTL_DEL_01.xml": REF,
    "FLTL_DNLD_01.xml": REF,
    "GLST_ADD_01.xml": REF,
    "GLST_DEL_01.xml": REF,
    "GLST_DNLD_01.xml": REF,
    "GLST_RESP_01.xml": REF,
    "GLST_UPD_01.xml": REF,
    "HLTR_ADD_01.xml": REF,
    "HLTR_DEL_01.xml": REF,
    "HLTR_DNLD_01.xml": REF,
    "HLTR_RESP_01.xml": REF,
    "HLTR_UPD_01.xml": REF,
    "ORGN_ADD_01.xml": REF,
    "ORGN_DEL_01.xml": REF,
    "ORGN_DNLD_01.xml": REF,
    "ORGN_RESP_01.xml": REF,
    "ORGN_UPD_01.xml": REF,
    "PLST_ADD_01.xml": REF,
    "PLST_DEL_01.xml": REF,
    "PLST_DNLD_01.xml": REF,
    "PLST_UPD_01.xml": REF,
    "REGL_ADD_01.xml": REF,
    "REGL_DEL_01.xml": REF,
    "REGL_DNLD_01.xml": REF,
    "REGL_RESP_01.xml": REF,
    "REGL_UPD_01.xml": REF,
    "REGN_ADD_01.xml": REF,
    "REGN_DEL_01.xml": REF,
    "REGN_DNLD_01.xml": REF,
    "REGN_RESP_01.xml": REF,
    "REGN_UPD_01.xml": REF,
    "SCHD_DNLD_01.xml": SCHD,
    "SCHS_DNLD_01.xml": SCHS,
    "SCHS_RESP_01.xml": SCHS,
    "SLST_ADD_01.xml": REF,
    "SLST_DEL_01.xml": REF,
    "SLST_DNLD_01.xml": REF,
    "SLST_RESP_01.xml": REF,
    "SLST_UPD_01.xml": REF,
    "STTS_ADD_01.xml": REF,
    "STTS_DEL_01.xml": REF,
    "STTS_DNLD_01.xml": REF,
    "STTS_RESP_01.xml": REF,
    "STTS_UPD_01.xml": REF,
    "TLST_ADD_01.xml": REF,
    "TLST_DEL_01.xml": REF,
    "TLST_DNLD_01.xml": REF,
    "TLST_RESP_01.xml": REF,
    "TLST_UPD_01.xml": REF,
    "VIPL_ADD_01.xml": REF,
    "VIPL_DEL_01.xml": REF,
    "VIPL_DNLD_01.xml": REF,
    "VIPS_ADD_01.xml": REF,
    "VIPS_DEL_01.xml": REF,
    "VIPS_DNLD_01.xml": REF,
}

pytestmark = pytest.mark.skipif(
    not (CORPUS_DIR / "INDEX.tsv").exists(), reason=f"no SIS corpus at {CORPUS_DIR}"
)


def _raw(name: str) -> bytes:
    return (CORPUS_DIR / name).read_bytes()


def test_every_corpus_file_has_an_expectation() -> None:
    on_disk = {path.name for path in CORPUS_DIR.glob("*.xml")}
    indexed = {row["file"] for row in read_index(CORPUS_DIR)}
    assert on_disk == indexed
    assert set(EXPECTED) == on_disk


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_file(name: str) -> None:
    expected = EXPECTED[name]
    raw = _raw(name)
    if isinstance(expected, Err):
        with pytest.raises(ProtocolError) as caught:
            decode(raw)
        assert caught.value.xpath == expected.xpath
        assert expected.reason in caught.value.reason
        return
    message = decode(raw)
    assert type(message) is expected
    assert len(message.payload_digest) == 64
    assert decode(encode(message)) == message
    assert decode(raw.decode("utf-8")) == message  # the inbox hands us text


@pytest.mark.parametrize("row", read_index(CORPUS_DIR), ids=lambda row: row["file"])
def test_envelope_and_flids_match_the_index(row: dict[str, str]) -> None:
    if isinstance(EXPECTED[row["file"]], Err) and row["parses_as_xml"] == "no":
        with pytest.raises(ProtocolError):
            decode_envelope(_raw(row["file"]))
        return
    envelope = decode_envelope(_raw(row["file"]))
    assert (envelope.type, envelope.styp) == (row["TYPE"], row["STYP"])
    assert envelope.identity_key == f"AODB|{row['TYPE']}|{row['STYP']}|{envelope.seqn}"
    if EXPECTED[row["file"]] in (FLOP, SCHD):
        message = decode(_raw(row["file"]))
        records = message.blocks if isinstance(message, FlopMessage) else message.records
        assert ",".join(record.flid for record in records) == row["flid_values"]


@pytest.mark.parametrize(
    ("name", "note"),
    [("AIRC_DNLD_01.xml", "RECS says 1 but 2"), ("FLTL_ADD_01.xml", "RECS says 2 but 1")],
)
def test_reference_recs_mismatch_is_noted_not_raised(name: str, note: str) -> None:
    """Spec §3/§4: reference data is not ours to validate; its RECS mismatch is kept as a
    note naming the element (the handler puts it in the IGNORED reason)."""
    message = decode(_raw(name))
    assert isinstance(message, ReferenceDataMessage)
    assert message.recs_note.startswith("/MSG/RECS")
    assert note in message.recs_note
