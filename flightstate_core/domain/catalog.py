"""The SIS field catalog: every scalar, exception object, document and collection.

This module is the one table that the codec, the handlers, the wire format and both
database layouts read. Rules are data here, not code:

1. A scalar is one flight-level value, stored raw; TIME scalars get a typed twin.
2. An exception object (FDIV/FRET/FLAB) is stored as flat scalar *parts*
   (``FDIV_TEXT``, ``FDIV_DDES``, ...). Its XML element maps onto those parts.
3. PORT carries POID (O/C) and POTM; it maps onto the scalars PORT_OPEN / PORT_CLOSE.
4. A collection is a repeated element with an optional sequence attribute; every item is
   kept in message order, never de-duplicated. Its default merge policy is in
   ``COLLECTIONS[code].policy`` and a site may override it (see ``CoreConfig``).
5. A document (SRVT, VIPF, MAFL) is a list of small records kept as lossless JSON text.
6. ``FLOP_SUBTYPES`` says which elements each FLOP subtype may carry; a FLOP block must
   carry at least one of them and nothing else (besides FLID and FFID).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from types import MappingProxyType
from typing import Final

from attrs import frozen

__all__ = [
    "COLLECTIONS",
    "DOCUMENTS",
    "EXCEPTIONS",
    "FLOP_SUBTYPES",
    "FLTR_ELEMENTS",
    "REFERENCE_DATA_TYPES",
    "SCALARS",
    "SCHEDULE_STYPES",
    "ChildSpec",
    "CollectionSpec",
    "DocumentSpec",
    "ExceptionSpec",
    "Policy",
    "ScalarSpec",
    "ValueKind",
]


class ValueKind(str, Enum):
    """How a raw text value is typed beside the raw text."""

    TEXT = "TEXT"
    TIME = "TIME"  # DDMONYYHHMM, airport local time
    DATE = "DATE"  # DDMONYY
    DURATION = "DURATION"  # HHMM, hours and minutes


class Policy(str, Enum):
    """How a collection carried by a message merges into the stored collection."""

    REPLACE = "REPLACE"  # the message's list becomes the whole collection
    MERGE_BY_SEQ = "MERGE_BY_SEQ"  # items with a seq the message names are replaced


@frozen
class ScalarSpec:
    """One flight-level scalar (a column of FLIGHT_SCHD, a key of the wire object)."""

    code: str
    kind: ValueKind = ValueKind.TEXT
    allowed: frozenset[str] | None = None  # enumerated values, else any text


@frozen
class ChildSpec:
    """One child value of a collection item or document item."""

    code: str
    kind: ValueKind = ValueKind.TEXT
    attribute: bool = False  # carried as an XML attribute instead of a child element
    allowed: frozenset[str] | None = None


@frozen
class CollectionSpec:
    """A repeated element stored in a detail table, one row per item."""

    code: str
    seq_attr: str | None  # the sequence attribute, kept as text in SOURCE_SEQ
    children: tuple[ChildSpec, ...]
    table: str
    policy: Policy
    clear_by_seq0: bool = False  # a single item with seq "0" and no children clears
    text_child: str | None = None  # the element text is stored under this code (DELY)
    route_kind: str | None = None  # ROUT/ERUT share FLIGHT_ROUTE_POINT by ROUTE_KIND

    def child(self, code: str) -> ChildSpec | None:
        for spec in self.children:
            if spec.code == code:
                return spec
        return None


@frozen
class DocumentSpec:
    """A repeated element kept as a lossless JSON document on the main row."""

    code: str
    children: tuple[ChildSpec, ...]
    nested: Mapping[str, tuple[ChildSpec, ...]] = MappingProxyType({})  # repeated groups


@frozen
class ExceptionSpec:
    """FDIV/FRET/FLAB: element text plus attributes, stored as flat scalar parts."""

    code: str
    text_part: str  # scalar code holding the element text
    attributes: Mapping[str, str]  # XML attribute -> scalar code
    clear_on_empty_attr: frozenset[str] = frozenset()  # attr="" clears the whole object


def _scalars(kind: ValueKind, *codes: str) -> tuple[ScalarSpec, ...]:
    return tuple(ScalarSpec(code, kind) for code in codes)


def _enum(*values: str) -> frozenset[str]:
    return frozenset(values)


_TEXT_SCALARS: Final = _scalars(
    ValueKind.TEXT,
    "FFID", "ALCD", "ALSC", "FLNO", "FLTY", "ACFT", "RENO", "TRML", "MAXP", "STND",
    "RUNW", "FTSS", "EXSC", "EXSR", "REMC", "PHAG", "FHAG", "MHAG", "VIPP", "VIPR",
    "LBNO", "LBWT", "PAXC", "TAOP", "TAFL", "TAID", "CSOP", "CSFT", "MAID",
)  # fmt: skip
_TIME_SCALARS: Final = _scalars(
    ValueKind.TIME,
    "SODT", "ESTT", "ACTT", "APPT", "BOTM", "LACL", "FINT", "EGSR", "EGST", "CNCL",
    "COBT", "TOBT", "EOBT", "CTOT", "IEST", "PEDT", "NEAT", "PADT", "NAAT",
    "PORT_OPEN", "PORT_CLOSE",
)  # fmt: skip
_EXCEPTION_PARTS: Final = (
    ScalarSpec("FDIV_TEXT"),
    ScalarSpec("FDIV_DDES"),
    ScalarSpec("FDIV_DDIR", allowed=_enum("TO", "FROM")),
    ScalarSpec("FRET_TEXT"),
    ScalarSpec("FRET_REID", allowed=_enum("A", "G")),
    ScalarSpec("FLAB_TEXT"),
    ScalarSpec("FLAB_ARES", allowed=_enum("O", "G")),
)

#: Every scalar by code, in column order.
SCALARS: Final[Mapping[str, ScalarSpec]] = MappingProxyType(
    {
        spec.code: spec
        for spec in (
            *_TEXT_SCALARS[:4],
            ScalarSpec("MVIN", allowed=_enum("A", "D")),
            ScalarSpec("FLIN", allowed=_enum("D", "I", "M")),
            *_TEXT_SCALARS[4:],
            *_TIME_SCALARS,
            *_EXCEPTION_PARTS,
        )
    }
)

#: FDIV/FRET/FLAB element -> parts. An element with no text and no (or blank)
#: attributes clears every part; FDIV with DDES="" clears the whole object (docs/protocol.md §7).
EXCEPTIONS: Final[Mapping[str, ExceptionSpec]] = MappingProxyType(
    {
        "FDIV": ExceptionSpec(
            "FDIV",
            "FDIV_TEXT",
            MappingProxyType({"DDES": "FDIV_DDES", "DDIR": "FDIV_DDIR"}),
            clear_on_empty_attr=frozenset({"DDES"}),
        ),
        "FRET": ExceptionSpec("FRET", "FRET_TEXT", MappingProxyType({"REID": "FRET_REID"})),
        "FLAB": ExceptionSpec("FLAB", "FLAB_TEXT", MappingProxyType({"ARES": "FLAB_ARES"})),
    }
)

#: PORT@POID value -> the scalar its POTM sets.
PORT_SCALARS: Final[Mapping[str, str]] = MappingProxyType({"O": "PORT_OPEN", "C": "PORT_CLOSE"})


def _children(*specs: str | ChildSpec) -> tuple[ChildSpec, ...]:
    return tuple(ChildSpec(s) if isinstance(s, str) else s for s in specs)


def _time(code: str, *, attribute: bool = False) -> ChildSpec:
    return ChildSpec(code, ValueKind.TIME, attribute=attribute)


_ROUTE_CHILDREN: Final = _children("APCD", _time("SCAT"), _time("SCDT"), "SADC", "SDDC")

#: Collections by element code, in detail-table order.
COLLECTIONS: Final[Mapping[str, CollectionSpec]] = MappingProxyType(
    {
        "GTDT": CollectionSpec(
            "GTDT", "GTNO",
            _children("GATE", _time("PGOT"), _time("PGCT"), _time("GOTM"), _time("GCTM"), "GTYP"),
            "FLIGHT_GATE", Policy.REPLACE, clear_by_seq0=True,
        ),
        "CKDT": CollectionSpec(
            "CKDT", "CKNO",
            _children(
                "CHKC", "CCLS", _time("PCOT"), _time("PCCT"), _time("COTM"), _time("CCTM"), "CTYP"
            ),
            "FLIGHT_CHECKIN", Policy.REPLACE, clear_by_seq0=True,
        ),
        "CLDT": CollectionSpec(
            "CLDT", "CLNO",
            _children(
                "BELT", "BCLS", _time("PCOT"), _time("PCCT"), _time("FBAG"), _time("LBAG"), "BTYP"
            ),
            "FLIGHT_BELT", Policy.REPLACE,
        ),
        "PSDT": CollectionSpec(
            "PSDT", "PSNO",
            _children(
                "PSST", _time("STST"), _time("STET"), "PSHN", _time("PSTM"), "PSID", _time("TRTM")
            ),
            "FLIGHT_STAND_PLAN", Policy.REPLACE,
        ),
        "CHDT": CollectionSpec(
            "CHDT", "CHNO",
            _children(
                "CHUT", "CCLS", _time("PCBT"), _time("PCET"), _time("CBTM"), _time("CETM"), "CTYP"
            ),
            "FLIGHT_CHUTE", Policy.REPLACE,
        ),
        "DELY": CollectionSpec(
            "DELY", None,
            (
                ChildSpec("CODE", attribute=True),
                _time("STRT", attribute=True),
                ChildSpec("DURA", ValueKind.DURATION, attribute=True),
                ChildSpec("DLTX"),
            ),
            "FLIGHT_DELAY", Policy.REPLACE, text_child="DLTX",
        ),
        "ABTM": CollectionSpec(
            "ABTM", "ASNO", _children("ABDG", "ABOP", _time("AOTM")),
            "FLIGHT_BRIDGE_OP", Policy.MERGE_BY_SEQ,
        ),
        "CHOT": CollectionSpec(
            "CHOT", "CSNO", _children(_time("CHTM"), "CHID", "CHST"),
            "FLIGHT_CHOCK_OP", Policy.MERGE_BY_SEQ,
        ),
        "ROUT": CollectionSpec(
            "ROUT", "RTNO", _ROUTE_CHILDREN, "FLIGHT_ROUTE_POINT", Policy.REPLACE, route_kind="ROUT"
        ),
        "ERUT": CollectionSpec(
            "ERUT", "RTNO", _ROUTE_CHILDREN, "FLIGHT_ROUTE_POINT", Policy.REPLACE, route_kind="ERUT"
        ),
    }
)  # fmt: skip

#: Documents kept as JSON text on the main row.
DOCUMENTS: Final[Mapping[str, DocumentSpec]] = MappingProxyType(
    {
        "SRVT": DocumentSpec(
            "SRVT",
            _children("SRTC", "SRQT", _time("SRST"), _time("SRET"), "SRPR", "SANR", "SARR"),
        ),
        "VIPF": DocumentSpec(
            "VIPF",
            _children("VPCD", "VFES"),
            nested=MappingProxyType(
                {"VIPT": _children("VSCD", "VTQY", _time("VTST"), _time("VTET"))}
            ),
        ),
        # MAFL lists a master's codeshares. flightstate maintains it from the codeshares'
        # MAID links (docs/protocol.md §8); a message may carry it too, but that copy is only noted.
        "MAFL": DocumentSpec("MAFL", _children("FLID", "CSOP", "CSFT")),
    }
)

#: PSHT / TIPT update stand-plan items whose PSST equals PUST / TRST (docs/protocol.md §6).
STAND_UPDATES: Final[Mapping[str, tuple[str | None, str, tuple[ChildSpec, ...]]]] = (
    MappingProxyType(
        {
            # element: (seq attribute copied to PSHN, match child, children copied)
            "PSHT": ("PSHN", "PUST", _children(_time("PSTM"), "PSID")),
            "TIPT": (None, "TRST", _children(_time("TRTM"))),
        }
    )
)

_SCALAR_ELEMENTS: Final = tuple(
    code for code in SCALARS if not code.startswith(("FDIV_", "FRET_", "FLAB_", "PORT_"))
)

#: Elements a schedule FLTR may carry besides FLID.
FLTR_ELEMENTS: Final[frozenset[str]] = frozenset(
    _SCALAR_ELEMENTS + tuple(EXCEPTIONS) + ("PORT",) + tuple(COLLECTIONS) + tuple(DOCUMENTS)
)

_SINGLE_SCALAR_SUBTYPES: Final = (
    "ACFT", "FLIN", "FLTY", "FTSS", "MAXP", "REMC", "RENO", "RUNW", "STND", "TRML", "APPT",
    "BOTM", "CNCL", "EGSR", "EGST", "FINT", "LACL", "COBT", "CTOT", "EOBT", "IEST", "NAAT",
    "NEAT", "PADT", "PEDT", "TOBT", "ESTT", "ACTT", "LBNO", "LBWT", "PAXC",
)  # fmt: skip

#: FLOP STYP -> the elements a block of that subtype may carry (besides FLID, FFID).
FLOP_SUBTYPES: Final[Mapping[str, frozenset[str]]] = MappingProxyType(
    {
        **{code: frozenset({code}) for code in _SINGLE_SCALAR_SUBTYPES},
        "EXSS": frozenset({"EXSC", "EXSR"}),
        "HNAG": frozenset({"FHAG", "PHAG", "MHAG"}),
        "VIPP": frozenset({"VIPP", "VIPR"}),
        "TAOP": frozenset({"TAOP", "TAFL", "TAID"}),
        "CSOP": frozenset({"CSOP", "CSFT", "MAID"}),
        "PORT": frozenset({"PORT"}),
        **{code: frozenset({code}) for code in EXCEPTIONS},
        **{code: frozenset({code}) for code in COLLECTIONS},
        **{code: frozenset({code}) for code in ("SRVT", "VIPF")},
        **{code: frozenset({code}) for code in STAND_UPDATES},
        "FDEL": frozenset({"FDEL"}),
    }
)

#: SCHD subtypes and what they do (docs/protocol.md §3, §8).
SCHEDULE_STYPES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "DNLD": "package",
        "RESP": "package",
        "ADFT": "set_only",
        "ADD": "set_only",
        "UPD": "set_only",
        "DEL": "delete",
    }
)

#: The 23 reference-data message types: recognised, never applied to flight state.
REFERENCE_DATA_TYPES: Final[frozenset[str]] = frozenset(
    [
        "ABDG",
        "ABNR",
        "AIRC",
        "AIRL",
        "ARPT",
        "BLST",
        "CHLT",
        "CITY",
        "CLST",
        "COUL",
        "DLYL",
        "FLTL",
        "GLST",
        "HLTR",
        "ORGN",
        "PLST",
        "REGL",
        "REGN",
        "SLST",
        "STTS",
        "TLST",
        "VIPL",
        "VIPS",
    ]
)

#: Scalars whose value proves a flight ended (lifecycle cleanup evidence).
TERMINAL_EVIDENCE_SCALARS: Final[frozenset[str]] = frozenset({"ACTT", "CNCL"})
