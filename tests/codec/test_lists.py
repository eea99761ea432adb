"""Collections, documents (SRVT/VIPF/MAFL) and PSHT/TIPT (docs/protocol.md §6, docs/design.md)."""

from __future__ import annotations

import pytest

from flightstate_core.domain.catalog import COLLECTIONS
from flightstate_core.domain.codec import decode
from flightstate_core.domain.items import DocItem, Item
from flightstate_core.domain.messages import FlopMessage, StandUpdate
from flightstate_core.domain.values import CLEAR, Set
from flightstate_testing.sis import flop, fltr, schd
from tests.codec.helpers import block, error, record
from tests.codec.test_corpus import CORPUS_DIR

GATE = "<GATE>{}</GATE><PGOT>15DEC031805</PGOT>"


def _corpus_block(name: str) -> FlopMessage:
    message = decode((CORPUS_DIR / name).read_bytes())
    assert isinstance(message, FlopMessage)
    return message


def test_flop_gtdt_01_three_gates_in_order() -> None:
    gates = _corpus_block("FLOP_GTDT_01.xml").blocks[0].collections["GTDT"]
    assert isinstance(gates, tuple)
    assert [item.get("GATE") for item in gates] == ["G28", "G33", "G23"]
    assert [item.seq for item in gates] == ["1", "2", "3"]
    assert [item.ordinal for item in gates] == [1, 2, 3]
    assert gates[0].values == (
        ("GATE", "G28"),
        ("PGOT", "15DEC031805"),
        ("PGCT", "15DEC031925"),
        ("GOTM", "15DEC031825"),
        ("GTYP", "D"),
    )


def test_single_gate_keeps_its_seq() -> None:
    got = block("GTDT", f'<GTDT GTNO="3">{GATE.format("G5")}</GTDT>').collections
    assert got == {"GTDT": (Item(1, "3", (("GATE", "G5"), ("PGOT", "15DEC031805"))),)}


@pytest.mark.parametrize("code", ["GTDT", "CKDT"])
@pytest.mark.parametrize(
    "form", ['<{c} {s}="0"></{c}>', '<{c} {s}="0"/>', '<{c} {s} = "0">\n</{c}>']
)
def test_seq_zero_alone_clears_gates_and_counters(code: str, form: str) -> None:
    element = form.format(c=code, s=COLLECTIONS[code].seq_attr)
    assert block(code, element).collections == {code: CLEAR}


def test_seq_zero_means_nothing_elsewhere() -> None:
    assert block("CLDT", '<CLDT CLNO="0"/>').collections == {"CLDT": (Item(1, "0", ()),)}
    with_child = block("GTDT", '<GTDT GTNO="0"><GATE>G1</GATE></GTDT>').collections
    assert with_child == {"GTDT": (Item(1, "0", (("GATE", "G1"),)),)}
    two = block("GTDT", '<GTDT GTNO="0"/><GTDT GTNO="1"><GATE>G1</GATE></GTDT>').collections
    assert two == {"GTDT": (Item(1, "0", ()), Item(2, "1", (("GATE", "G1"),)))}


@pytest.mark.parametrize("code", sorted(COLLECTIONS))
def test_one_empty_element_clears_any_collection(code: str) -> None:
    assert block(code, f"<{code}></{code}>").collections == {code: CLEAR}
    assert record(f"<{code}/>").collections == {code: CLEAR}


def test_empty_element_next_to_items_is_an_error() -> None:
    caught = error(flop("DELY", '<DELY CODE="YY">X</DELY><DELY></DELY>'))
    assert caught.xpath == "/MSG/FLOP[1]/DELY[2]"


def test_dely_items_and_clear() -> None:
    corpus = _corpus_block("FLOP_DELY_01.xml").blocks[0].collections["DELY"]
    assert isinstance(corpus, tuple)
    assert corpus[1] == Item(
        2, None, (("CODE", "XX"), ("STRT", "15DEC031605"), ("DURA", "0201"), ("DLTX", "XXXXXXX"))
    )
    assert _corpus_block("FLOP_DELY_02.xml").blocks[0].collections == {"DELY": CLEAR}
    bare = block("DELY", '<DELY DURA="0130" CODE=""/>').collections
    assert bare == {"DELY": (Item(1, None, (("CODE", ""), ("DURA", "0130"), ("DLTX", ""))),)}


@pytest.mark.parametrize(
    ("element", "xpath"),
    [
        ('<DELY DURA="0160">X</DELY>', "/MSG/FLOP[1]/DELY[1]/@DURA"),
        ('<DELY STRT="15dec031605">X</DELY>', "/MSG/FLOP[1]/DELY[1]/@STRT"),
        ('<DELY REASON="x">X</DELY>', "/MSG/FLOP[1]/DELY[1]/@REASON"),
        ('<DELY CODE="A"><DLTX>x</DLTX></DELY>', "/MSG/FLOP[1]/DELY[1]/DLTX"),
    ],
)
def test_dely_errors(element: str, xpath: str) -> None:
    assert error(flop("DELY", element)).xpath == xpath


def test_items_keep_everything_in_catalog_order() -> None:
    body = (
        '<ABTM ASNO="1"><AOTM>10DEC061343</AOTM><ABDG>212</ABDG></ABTM>'
        '<ABTM ASNO="1"><ABDG>212</ABDG><ABOP></ABOP></ABTM>'
        "<ABTM><ABOP>D</ABOP></ABTM>"
        '<ABTM ASNO=""><ABOP>A</ABOP></ABTM>'
    )
    assert block("ABTM", body).collections["ABTM"] == (
        Item(1, "1", (("ABDG", "212"), ("AOTM", "10DEC061343"))),
        Item(2, "1", (("ABDG", "212"), ("ABOP", ""))),
        Item(3, None, (("ABOP", "D"),)),
        Item(4, "", (("ABOP", "A"),)),
    )


def test_routes_and_interleaved_items_in_a_fltr() -> None:
    got = record(
        '<ROUT RTNO = "1"><APCD>XIY</APCD></ROUT><ACFT>733</ACFT>'
        '<ERUT RTNO="1"><APCD>CTU</APCD></ERUT><ROUT RTNO="2"><APCD>PEK</APCD></ROUT>'
    )
    assert got.collections == {
        "ROUT": (Item(1, "1", (("APCD", "XIY"),)), Item(2, "2", (("APCD", "PEK"),))),
        "ERUT": (Item(1, "1", (("APCD", "CTU"),)),),
    }
    assert got.scalars == {"ACFT": Set("733")}


def test_bad_child_time_names_the_item() -> None:
    gates = "".join(f'<GTDT GTNO="{i}">{GATE.format("G1")}</GTDT>' for i in (1, 2))
    bad = '<GTDT GTNO="3"><GATE>G9</GATE><PGOT>15DEC032505</PGOT></GTDT>'
    raw = schd("DNLD", fltr(""), fltr(gates + bad, flid="16"))
    caught = error(raw)
    assert caught.xpath == "/MSG/SCHD/FLTR[2]/GTDT[3]/PGOT"


@pytest.mark.parametrize(
    ("element", "xpath", "reason"),
    [
        ('<GTDT GTNO="1"><GATE>G1</GATE><FOO/></GTDT>', "/MSG/FLOP[1]/GTDT[1]/FOO", "unknown"),
        (
            '<GTDT GTNO="1"><GATE>G1</GATE><GATE>G2</GATE></GTDT>',
            "/MSG/FLOP[1]/GTDT[1]/GATE[2]",
            "repeated",
        ),
        ('<GTDT GTNO="1" X="2"><GATE>G1</GATE></GTDT>', "/MSG/FLOP[1]/GTDT[1]/@X", "unknown"),
        (
            '<GTDT GTNO="1"><GATE T="1">G1</GATE></GTDT>',
            "/MSG/FLOP[1]/GTDT[1]/GATE/@T",
            "unexpected",
        ),
        ('<GTDT GTNO="1"><GATE><B/></GATE></GTDT>', "/MSG/FLOP[1]/GTDT[1]/GATE/B", "unexpected"),
        ('<GTDT GTNO="1">G1</GTDT>', "/MSG/FLOP[1]/GTDT[1]", "unexpected text"),
        ('<GTDT GTNO="1"><GATE>G1</GATE>tail</GTDT>', "/MSG/FLOP[1]/GTDT[1]", "unexpected text"),
    ],
)
def test_item_errors(element: str, xpath: str, reason: str) -> None:
    caught = error(flop("GTDT", element))
    assert caught.xpath == xpath
    assert reason in caught.reason


# ------------------------------------------------------------------------ documents


def test_srvt_multi_item_with_chinese_text() -> None:
    message = _corpus_block("FLOP_SRVT_02.xml")
    services = message.blocks[0].documents["SRVT"]
    assert services == (
        DocItem(
            (
                ("SRTC", "ATN"),
                ("SRQT", "2"),
                ("SRST", "12DEC231400"),
                ("SRET", "12DEC231430"),
                ("SRPR", ""),
                ("SANR", "MAC"),
                ("SARR", "由于机器问题"),
            )
        ),
        DocItem((("SRTC", "ATL"), ("SRQT", "2"), ("SRST", ""), ("SRET", ""), ("SRPR", ""))),
        DocItem(
            (
                ("SRTC", "ACCN"),
                ("SRQT", "0"),
                ("SRST", "12DEC211400"),
                ("SRET", "12DEC211430"),
                ("SRPR", "107007"),
            )
        ),
    )
    assert _corpus_block("FLOP_SRVT_03.xml").blocks[0].documents == {"SRVT": CLEAR}


def test_vipf_with_nested_vipt() -> None:
    body = (
        "<VIPF><VPCD>VC1</VPCD><VIPT><VSCD>A</VSCD><VTST>01JAN220800</VTST></VIPT>"
        "<VIPT><VTQY>2</VTQY></VIPT><VFES>3</VFES></VIPF><VIPF><VFES></VFES></VIPF>"
    )
    assert block("VIPF", body).documents == {
        "VIPF": (
            DocItem(
                (
                    ("VPCD", "VC1"),
                    ("VFES", "3"),
                    (
                        "VIPT",
                        (
                            DocItem((("VSCD", "A"), ("VTST", "01JAN220800"))),
                            DocItem((("VTQY", "2"),)),
                        ),
                    ),
                )
            ),
            DocItem((("VFES", ""),)),
        )
    }


def test_mafl_in_a_fltr_and_document_errors() -> None:
    got = record("<MAFL><FLID>16</FLID><CSOP>MU</CSOP></MAFL>").documents
    assert got == {"MAFL": (DocItem((("FLID", "16"), ("CSOP", "MU"))),)}
    bad_time = "<SRVT><SRTC>A</SRTC></SRVT><SRVT><SRST>12dec231400</SRST></SRVT>"
    assert error(flop("SRVT", bad_time)).xpath == "/MSG/FLOP[1]/SRVT[2]/SRST"
    assert error(flop("SRVT", "<SRVT><X>1</X></SRVT>")).xpath == "/MSG/FLOP[1]/SRVT[1]/X"
    mixed = "<SRVT><SRTC>A</SRTC></SRVT><SRVT/>"
    assert error(flop("SRVT", mixed)).xpath == "/MSG/FLOP[1]/SRVT[2]"
    nested = "<VIPF><VIPT><VTST>1</VTST></VIPT></VIPF>"
    assert error(flop("VIPF", nested)).xpath == "/MSG/FLOP[1]/VIPF[1]/VIPT[1]/VTST"


# ---------------------------------------------------------------------- PSHT / TIPT


def test_psht_and_tipt() -> None:
    psht = _corpus_block("FLOP_PSHT_01.xml").blocks[0].stand_updates
    assert psht == (
        StandUpdate("PSHT", "504", "1", (("PSTM", Set("10AUG181346")), ("PSID", Set("IN")))),
    )
    tipt = _corpus_block("FLOP_TIPT_01.xml").blocks[0].stand_updates
    assert [(u.kind, u.match, u.seq, u.values) for u in tipt] == [
        ("TIPT", "503", None, (("TRTM", Set("10AUG181350")),)),
        ("TIPT", "504", None, (("TRTM", Set("10AUG181344")),)),
    ]
    cleared = block("PSHT", "<PSHT><PUST>S1</PUST><PSTM/></PSHT>").stand_updates
    assert cleared == (StandUpdate("PSHT", "S1", None, (("PSTM", CLEAR),)),)


@pytest.mark.parametrize(
    ("styp", "element", "xpath"),
    [
        ("PSHT", '<PSHT PSHN="1"><PSTM>10AUG181346</PSTM></PSHT>', "/MSG/FLOP[1]/PSHT[1]/PUST"),
        ("TIPT", "<TIPT><TRST>1</TRST></TIPT><TIPT><TRTM/></TIPT>", "/MSG/FLOP[1]/TIPT[2]/TRST"),
        ("TIPT", '<TIPT TRNO="1"><TRST>1</TRST></TIPT>', "/MSG/FLOP[1]/TIPT[1]/@TRNO"),
        ("PSHT", "<PSHT><PUST>1</PUST><PSTM>x</PSTM></PSHT>", "/MSG/FLOP[1]/PSHT[1]/PSTM"),
        ("PSHT", "<PSHT><PUST>1</PUST><PUST>2</PUST></PSHT>", "/MSG/FLOP[1]/PSHT[1]/PUST[2]"),
    ],
)
def test_stand_update_errors(styp: str, element: str, xpath: str) -> None:
    assert error(flop(styp, element)).xpath == xpath
