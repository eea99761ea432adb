"""Deterministic builders of realistic SIS messages (benchmarks, fixtures, load tests).

``build_dnld(n_flights, seed)``, ``build_dense_dnld(n_flights, seed)`` and
``build_flop(styp, seed)`` return indented UTF-8 XML,
shaped like the corpus samples, the same bytes for the same arguments. They build the
message model and go through ``encode`` so the output always decodes.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from lxml import etree

from flightstate_core.domain.codec import encode
from flightstate_core.domain.items import Item
from flightstate_core.domain.messages import (
    Envelope,
    FlightRecord,
    FlopMessage,
    Message,
    ScheduleMessage,
)
from flightstate_core.domain.times import parse_time
from flightstate_core.domain.values import Set
from flightstate_testing.sis import sis_time as _t  # short: the builders below use it often

__all__ = [
    "build_dense_dnld", "build_dnld", "build_dnld_message", "build_flop", "dnld_backlog",
    "indent_xml",
]  # fmt: skip

_SEQN = re.compile(r"<SEQN>[0-9]+</SEQN>")

_AIRLINES = ("CA", "MU", "CZ", "YG", "3U", "HU", "ZH", "MF")
_AIRPORTS = ("PEK", "SHA", "CTU", "XIY", "HGH", "CAN", "SZX", "KMG", "HKG", "NRT")
_AIRCRAFT = ("733", "738", "320", "321", "333", "359", "77W")
_DAY = datetime(2021, 1, 23)
_DEPARTURE_SHARE = 0.5
_ZONE = ZoneInfo("Asia/Shanghai")


def _time_set(moment: datetime) -> Set:
    raw = _t(moment)
    return Set(raw, parse_time(raw, _ZONE))


def _items(*rows: tuple[str | None, tuple[tuple[str, str], ...]]) -> tuple[Item, ...]:
    return tuple(Item(index, seq, values) for index, (seq, values) in enumerate(rows, 1))


def _resources(rng: random.Random, sodt: datetime, departure: bool) -> dict[str, tuple[Item, ...]]:
    stand = f"{rng.randint(1, 60):03d}"
    lists = {
        "PSDT": _items(
            ("1", (("PSST", stand), ("STST", _t(sodt - timedelta(hours=2))), ("STET", _t(sodt))))
        ),
        "ROUT": _items(
            *((str(i), (("APCD", rng.choice(_AIRPORTS)), ("SCAT", _t(sodt)))) for i in (1, 2))
        ),
        "ERUT": _items(
            ("1", (("APCD", "CTU"), ("SCDT", _t(sodt)))),
            ("2", (("APCD", rng.choice(_AIRPORTS)), ("SCAT", _t(sodt + timedelta(hours=2))))),
        ),
    }
    if departure:
        gate = (("GATE", f"G{rng.randint(1, 40)}"), ("PGOT", _t(sodt - timedelta(minutes=40))))
        lists["GTDT"] = _items(("1", (*gate, ("PGCT", _t(sodt)), ("GTYP", "D"))))
        counters = [
            (str(i), (("CHKC", f"{rng.randint(1, 99):02d}"), ("CCLS", "Y"))) for i in (1, 2)
        ]
        lists["CKDT"] = _items(*counters)
    else:
        lists["CLDT"] = _items(("1", (("BELT", f"B{rng.randint(1, 12):02d}"), ("BTYP", "D"))))
    return lists


def _flight_texts(rng: random.Random, flid: int) -> tuple[datetime, bool, dict[str, str]]:
    """What every generated flight starts with: its schedule time, direction and the
    identifying scalars (the random draws in the order both builders always made them)."""
    airline = rng.choice(_AIRLINES)
    departure = rng.random() < _DEPARTURE_SHARE
    sodt = _DAY + timedelta(minutes=rng.randint(0, 24 * 60 - 1))
    texts = {
        "FFID": f"{airline}-{airline}{flid % 9000 + 100}-{'D' if departure else 'A'}-{_t(sodt)}",
        "ALCD": airline,
        "FLNO": f"{airline}{rng.randint(100, 9999)}",
        "MVIN": "D" if departure else "A",
    }
    return sodt, departure, texts


def _scalars(rng: random.Random, texts: dict[str, str], sodt: datetime) -> dict[str, Set]:
    """*texts* as Set values, with the schedule time and an estimate up to 30 min later."""
    scalars: dict[str, Set] = {code: Set(raw) for code, raw in texts.items()}
    scalars["SODT"] = _time_set(sodt)
    scalars["ESTT"] = _time_set(sodt + timedelta(minutes=rng.randint(0, 30)))
    return scalars


def _flight(rng: random.Random, flid: int) -> FlightRecord:
    sodt, departure, texts = _flight_texts(rng, flid)
    airline = texts["ALCD"]
    texts |= {
        "FLTY": "W",
        "FLIN": rng.choice("DIM"),
        "ACFT": rng.choice(_AIRCRAFT),
        "RENO": f"B{rng.randint(1000, 9999)}",
        "TAOP": airline,
        "TAFL": f"{airline}{rng.randint(100, 9999)}",
        "TAID": str(flid + 1),
        "TRML": rng.choice(("T1", "T2")),
        "MAXP": str(rng.choice((150, 180, 300))),
        "STND": f"{rng.randint(1, 60):03d}",
        "PHAG": "110009",
        "FHAG": "110009",
        "MHAG": "110009",
        "EXSC": "RCFLOP",
        "FTSS": "SCHD",
    }
    scalars = _scalars(rng, texts, sodt)
    return FlightRecord(str(flid), scalars, _resources(rng, sodt, departure))


def _dense_flight(rng: random.Random, flid: int) -> FlightRecord:
    """A flight of a dense package: a few scalars and no resource lists (~260 bytes)."""
    sodt, _, texts = _flight_texts(rng, flid)
    texts |= {
        "TRML": rng.choice(("T1", "T2")),
        "STND": f"{rng.randint(1, 60):03d}",
    }
    return FlightRecord(str(flid), _scalars(rng, texts, sodt))


def _envelope(type_: str, styp: str, seqn: int) -> Envelope:
    return Envelope("AODB", str(seqn % 1_000_000), "20210122223126", type_, styp)


def indent_xml(raw: bytes) -> bytes:
    """Re-serialize with two-space indentation, as AODB samples are."""
    root = etree.fromstring(raw)
    etree.indent(root, space="  ")
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def build_dnld_message(n_flights: int, seed: int = 0) -> ScheduleMessage:
    """A SCHD DNLD model with ``n_flights`` realistic flights (FLIDs from 100000)."""
    rng = random.Random(seed)  # noqa: S311 - reproducible test data, not cryptography
    records = tuple(_flight(rng, 100_000 + index) for index in range(n_flights))
    return ScheduleMessage(_envelope("SCHD", "DNLD", seed), len(records), records)


def build_dnld(n_flights: int, seed: int = 0) -> bytes:
    """Indented XML of ``build_dnld_message(n_flights, seed)``."""
    return indent_xml(encode(build_dnld_message(n_flights, seed)))


def build_dense_dnld(n_flights: int, seed: int = 0) -> bytes:
    """A dense SCHD DNLD: many small flights (8,000 in 2.1 MB), where the decoded package
    costs more per byte of text than ``build_dnld``'s (docs/design.md, "Poison-proof
    bounds")."""
    rng = random.Random(seed)  # noqa: S311 - reproducible test data, not cryptography
    records = tuple(_dense_flight(rng, 100_000 + index) for index in range(n_flights))
    message = ScheduleMessage(_envelope("SCHD", "DNLD", seed), len(records), records)
    return indent_xml(encode(message))


def dnld_backlog(
    count: int, n_flights: int, distinct: int = 4, *, dense: bool = False
) -> Iterator[str]:
    """*count* DNLD packages of the same *n_flights* flights (a backlog of schedule answers),
    cycling through *distinct* contents so each package changes every flight, each with its
    own SEQN (a later copy is a new message, not a business duplicate). Built lazily.
    *dense*: packages of ``build_dense_dnld``."""
    build = build_dense_dnld if dense else build_dnld
    texts = [build(n_flights, seed).decode("utf-8") for seed in range(1, distinct + 1)]
    for number in range(count):
        seqn = f"<SEQN>{(number + 1) % 1_000_000}</SEQN>"
        yield _SEQN.sub(seqn, texts[number % distinct], count=1)


def build_flop(styp: str = "GTDT", seed: int = 0, flid: str = "121112312") -> bytes:
    """An indented FLOP message (GTDT with three gates, or ESTT/STND/DELY) for ``flid``."""
    rng = random.Random(seed)  # noqa: S311 - reproducible test data, not cryptography
    sodt = _DAY + timedelta(minutes=rng.randint(0, 24 * 60 - 1))
    record = FlightRecord(flid, {"FFID": Set(f"CA-CA101-D-{_t(sodt)}-D")})
    if styp == "GTDT":
        gates = tuple(
            Item(i, str(i), (("GATE", f"G{rng.randint(1, 40)}"), ("PGOT", _t(sodt)), ("GTYP", "D")))
            for i in (1, 2, 3)
        )
        record = FlightRecord(flid, record.scalars, {"GTDT": gates})
    elif styp == "DELY":
        delay = Item(
            1, None, (("CODE", "YY"), ("STRT", _t(sodt)), ("DURA", "0130"), ("DLTX", "WX"))
        )
        record = FlightRecord(flid, record.scalars, {"DELY": (delay,)})
    elif styp in ("ESTT", "STND"):
        value = _time_set(sodt) if styp == "ESTT" else Set(f"{rng.randint(1, 60):03d}")
        record = FlightRecord(flid, {**record.scalars, styp: value})
    else:
        raise ValueError(f"build_flop supports GTDT, DELY, ESTT, STND, not {styp!r}")
    message: Message = FlopMessage(_envelope("FLOP", styp, seed), (record,))
    return indent_xml(encode(message))
