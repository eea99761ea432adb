"""Deterministic synthetic SIS traffic: a day of mixed messages, or a FLOP backlog.

For crash/failover tests and benchmarks. Same seed, same list of raw XML strings. A day
opens with SCHD DNLD packages that create the flights, then mixes FLOP updates of every
subtype family (scalars, groups, exception objects, collections, documents, stand updates,
codeshare links, FDEL), SCHD ADD/UPD/DEL, reference data and SCHS (IGNORED), exact
resends (business DUPLICATE) and broken messages (DEAD: not well-formed, unknown TYPE,
unparsable time, invalid enumerated attribute, RECS mismatch).
"""

# ruff: noqa: PLR2004, S311 - traffic mix probabilities read best inline; not cryptography

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from xml.sax.saxutils import escape

from flightstate_testing.sis import sis_time

__all__ = ["DEFAULT_DAY", "TrafficGenerator", "flop_backlog", "generate_day"]

DEFAULT_DAY = date(2026, 11, 30)  # what tests and benchmarks generate, unless told a day
_AIRLINES = ("CA", "MU", "CZ", "HU", "3U", "YG", "ZH")
_AIRPORTS = ("PEK", "PVG", "CAN", "CTU", "XIY", "HGH", "SZX", "KMG")
_TIME_SUBTYPES = (
    "ESTT", "ACTT", "APPT", "BOTM", "LACL", "FINT", "EGSR", "EGST", "COBT", "TOBT",
    "EOBT", "CTOT", "IEST", "PEDT", "NEAT", "PADT", "NAAT",
)  # fmt: skip
_TEXT_SUBTYPES = ("ACFT", "FLTY", "FTSS", "MAXP", "REMC", "RENO", "RUNW", "STND", "TRML")
_REFERENCE = ("AIRL", "ARPT", "CITY", "GLST", "STTS", "DLYL")


def _el(code: str, text: str) -> str:
    return f"<{code}>{escape(text)}</{code}>"


class TrafficGenerator:
    """Builds raw messages; SEQN and DTTM advance per message."""

    def __init__(self, seed: int = 1, day: datetime | None = None) -> None:
        self.rng = random.Random(seed)
        self.day = day if day is not None else datetime.combine(DEFAULT_DAY, time())
        self._seqn = 100000
        self._clock = self.day - timedelta(hours=2)

    # ------------------------------------------------------------------ envelope

    def envelope(self, type_: str, styp: str, body: str, *, seqn: int | None = None) -> str:
        """A whole MSG with META; a new SEQN and DTTM unless *seqn* is given."""
        if seqn is None:
            self._seqn = self._seqn + 1 if self._seqn < 999999 else 1
            seqn = self._seqn
        self._clock += timedelta(seconds=7)
        meta = (
            f"<META><SNDR>AODB</SNDR><SEQN>{seqn}</SEQN><DTTM>{self._clock:%Y%m%d%H%M%S}</DTTM>"
            f"<TYPE>{type_}</TYPE><STYP>{styp}</STYP></META>"
        )
        return (
            '<?xml version="1.0" encoding="UTF-8"?>\n<MSG xmlns:xsi="http://www.w3.org/2001/'
            f'XMLSchema-instance" xsi:noNamespaceSchemaLocation="unisysaodbsis.xsd">{meta}'
            f"{body}</MSG>"
        )

    def when(self, flid: int, minutes: int = 0) -> str:
        """A flight's scheduled time (spread over the day) plus *minutes*."""
        base = self.day + timedelta(minutes=(flid * 37) % (20 * 60) + 240 + minutes)
        return sis_time(base)

    # ------------------------------------------------------------------ schedule

    def fltr(self, flid: int) -> str:
        """One schedule record of flight *flid*."""
        rng = self.rng
        airline = _AIRLINES[flid % len(_AIRLINES)]
        route = "".join(
            f'<ROUT RTNO="{n}"><APCD>{rng.choice(_AIRPORTS)}</APCD>'
            f"<SCDT>{self.when(flid, -60 * n)}</SCDT></ROUT>"
            for n in (1, 2)[: 1 + flid % 2]
        )
        return (
            f"<FLTR>{_el('FLID', str(flid))}{_el('ALCD', airline)}"
            f"{_el('FLNO', f'{airline}{1000 + flid}')}{_el('MVIN', 'AD'[flid % 2])}"
            f"{_el('SODT', self.when(flid))}{_el('FLTY', 'W')}{_el('FLIN', 'DIM'[flid % 3])}"
            f"{route}{_el('ACFT', '73' + str(flid % 10))}{_el('TRML', 'T' + str(1 + flid % 2))}"
            f"{_el('STND', str(500 + flid % 60))}"
            f'<PSDT PSNO="1"><PSST>{500 + flid % 60}</PSST><STST>{self.when(flid, -90)}</STST>'
            f"<STET>{self.when(flid, 30)}</STET></PSDT></FLTR>"
        )

    def schedule(self, styp: str, flids: list[int], *, recs: int | None = None) -> str:
        """SCHD DNLD/RESP/ADD/UPD package of these flights."""
        count = len(flids) if recs is None else recs
        body = f"<SCHD><RECS>{count}</RECS>{''.join(self.fltr(f) for f in flids)}</SCHD>"
        return self.envelope("SCHD", styp, body)

    def schedule_delete(self, flid: int) -> str:
        """SCHD DEL of one flight."""
        return self.envelope(
            "SCHD", "DEL", f"<SCHD><RECS>1</RECS><FLTR><FLID>{flid}</FLID></FLTR></SCHD>"
        )

    # ------------------------------------------------------------------ FLOP

    def flop(self, styp: str, flid: int, inner: str) -> str:
        """A FLOP of subtype *styp* for *flid* carrying *inner*."""
        return self.envelope("FLOP", styp, f"<FLOP><FLID>{flid}</FLID>{inner}</FLOP>")

    def estimate_flop(self, flid: int, minutes: int = 15) -> str:
        """A FLOP ESTT of *flid*: its scheduled time plus *minutes* (to an unknown FLID it
        creates the flight, so each makes one ``schd`` record)."""
        return self.flop("ESTT", flid, _el("ESTT", self.when(flid, minutes)))

    def random_flop(self, flid: int, flids: list[int]) -> str:
        """One FLOP of a random subtype family."""
        makers: list[Callable[[int, list[int]], str]] = [
            self._flop_time, self._flop_time, self._flop_time, self._flop_text,
            self._flop_group, self._flop_exception, self._flop_collection,
            self._flop_collection, self._flop_document, self._flop_stand_update,
            self._flop_codeshare,
        ]  # fmt: skip
        return self.rng.choice(makers)(flid, flids)

    def time_flop(self, flid: int) -> str:
        """A FLOP setting (rarely clearing) one time of *flid*."""
        return self._flop_time(flid, [])

    def _flop_time(self, flid: int, _flids: list[int]) -> str:
        styp = self.rng.choice(_TIME_SUBTYPES)
        if self.rng.random() < 0.05:
            return self.flop(styp, flid, f"<{styp}></{styp}>")  # Clear
        return self.flop(styp, flid, _el(styp, self.when(flid, self.rng.randint(-60, 90))))

    def _flop_text(self, flid: int, _flids: list[int]) -> str:
        styp = self.rng.choice(_TEXT_SUBTYPES)
        value = "延误 备注" if styp == "REMC" else str(self.rng.randint(1, 999))
        return self.flop(styp, flid, _el(styp, value))

    def _flop_group(self, flid: int, _flids: list[int]) -> str:
        rng = self.rng
        choice = rng.randrange(4)
        if choice == 0:
            return self.flop("EXSS", flid, _el("EXSC", "DLY") + _el("EXSR", "天气"))
        if choice == 1:
            return self.flop("HNAG", flid, _el("FHAG", str(rng.randint(100, 999))))
        if choice == 2:
            return self.flop("VIPP", flid, _el("VIPP", str(rng.randint(0, 9))) + _el("VIPR", "A"))
        poid = rng.choice("OC")
        inner = f"<PORT><POTM>{self.when(flid)}</POTM><POID>{poid}</POID></PORT>"
        return self.flop("PORT", flid, inner)

    def _flop_exception(self, flid: int, _flids: list[int]) -> str:
        choice = self.rng.randrange(3)
        if choice == 0:
            dest = self.rng.choice(_AIRPORTS)
            return self.flop("FDIV", flid, f'<FDIV DDES="{dest}" DDIR="TO">天气</FDIV>')
        if choice == 1:
            return self.flop("FRET", flid, '<FRET REID="A">机械</FRET>')
        return self.flop("FLAB", flid, '<FLAB ARES="G">流控</FLAB>')

    def _flop_collection(self, flid: int, _flids: list[int]) -> str:
        rng = self.rng
        kind = rng.choice(("GTDT", "CKDT", "CLDT", "CHDT", "DELY", "ABTM", "CHOT", "ERUT"))
        n = rng.randint(1, 3)
        if kind == "GTDT":
            inner = "".join(
                f'<GTDT GTNO="{i}"><GATE>G{rng.randint(1, 60)}</GATE>'
                f"<PGOT>{self.when(flid, -40)}</PGOT><GTYP>D</GTYP></GTDT>"
                for i in range(1, n + 1)
            )
        elif kind == "CKDT":
            inner = "".join(
                f'<CKDT CKNO="{i}"><CHKC>{rng.randint(1, 200)}</CHKC><CCLS>Y</CCLS></CKDT>'
                for i in range(1, n + 1)
            )
        elif kind == "CLDT":
            inner = f'<CLDT CLNO="1"><BELT>{rng.randint(1, 30)}</BELT></CLDT>'
        elif kind == "CHDT":
            inner = f'<CHDT CHNO="1"><CHUT>{rng.randint(1, 20)}</CHUT></CHDT>'
        elif kind == "DELY":
            inner = (
                f'<DELY CODE="{rng.randint(10, 99)}" DURA="0{rng.randint(1, 9)}30">流量控制</DELY>'
            )
        elif kind == "ABTM":
            inner = (
                f'<ABTM ASNO="{rng.randint(1, 2)}"><ABDG>{rng.randint(1, 40)}</ABDG>'
                f"<ABOP>{rng.choice('AD')}</ABOP><AOTM>{self.when(flid, 5)}</AOTM></ABTM>"
            )
        elif kind == "CHOT":
            inner = (
                f'<CHOT CSNO="{rng.randint(1, 2)}"><CHTM>{self.when(flid, 2)}</CHTM>'
                f"<CHID>{rng.randint(1, 9)}</CHID><CHST>ON</CHST></CHOT>"
            )
        else:
            inner = f'<ERUT RTNO="1"><APCD>{rng.choice(_AIRPORTS)}</APCD></ERUT>'
        return self.flop(kind, flid, inner)

    def _flop_document(self, flid: int, _flids: list[int]) -> str:
        if self.rng.random() < 0.5:
            inner = f"<SRVT><SRTC>WCH</SRTC><SRQT>{self.rng.randint(1, 3)}</SRQT></SRVT>"
            return self.flop("SRVT", flid, inner)
        inner = (
            "<VIPF><VPCD>V1</VPCD><VFES>Y</VFES><VIPT><VSCD>A</VSCD><VTQY>2</VTQY></VIPT></VIPF>"
        )
        return self.flop("VIPF", flid, inner)

    def _flop_stand_update(self, flid: int, _flids: list[int]) -> str:
        stand = 500 + flid % 60
        if self.rng.random() < 0.5:
            inner = (
                f'<PSHT PSHN="1"><PSTM>{self.when(flid, 1)}</PSTM><PSID>T9</PSID>'
                f"<PUST>{stand}</PUST></PSHT>"
            )
            return self.flop("PSHT", flid, inner)
        return self.flop(
            "TIPT", flid, f"<TIPT><TRTM>{self.when(flid, 3)}</TRTM><TRST>{stand}</TRST></TIPT>"
        )

    def _flop_codeshare(self, flid: int, flids: list[int]) -> str:
        master = self.rng.choice(flids)
        if master == flid:
            return self.flop("CSOP", flid, "<CSOP></CSOP><CSFT></CSFT><MAID></MAID>")
        inner = _el("CSOP", "MU") + _el("CSFT", f"MU{5000 + flid}") + _el("MAID", str(master))
        return self.flop("CSOP", flid, inner)

    # ------------------------------------------------------------------ others

    def reference(self) -> str:
        """A reference-data message (IGNORED)."""
        type_ = self.rng.choice(_REFERENCE)
        body = f"<RECS>1</RECS><{type_}><CODE>X{self.rng.randint(1, 99)}</CODE></{type_}>"
        return self.envelope(type_, "UPD", body)

    def broken(self) -> str:
        """A message that must end DEAD."""
        choice = self.rng.randrange(5)
        if choice == 0:
            return self.flop("ESTT", 1, "<ESTT>01JAN260000</ESTT>") + "</MSG>"  # not well-formed
        if choice == 1:
            return self.envelope("XXXX", "NONE", "<XXXX/>")  # unknown TYPE
        if choice == 2:
            return self.flop("ESTT", 1, "<ESTT>99XYZ261234</ESTT>")  # unparsable time
        if choice == 3:
            return self.flop("FDIV", 1, '<FDIV DDES="PEK" DDIR="SIDEWAYS">x</FDIV>')
        return self.schedule("DNLD", [1, 2], recs=3)  # RECS mismatch


def generate_day(
    seed: int = 1, *, flights: int = 300, messages: int = 5000, day: date | None = None
) -> list[str]:
    """A deterministic day of mixed traffic, at least *messages* long.

    *day* is the flights' operation day (DEFAULT_DAY unless given, so tests see the same text
    every time). Whoever feeds a running pump passes today: a fixed day falls behind the
    clock, and once it is past the retention the pump's cleanup removes its flights.
    """
    gen = TrafficGenerator(seed, datetime.combine(day or DEFAULT_DAY, time()))
    rng = gen.rng
    flids = list(range(1, flights + 1))
    out = [gen.schedule("DNLD", flids[i : i + 25]) for i in range(0, flights, 25)]
    next_flid = flights + 1
    while len(out) < messages:
        roll = rng.random()
        if roll < 0.70:
            out.append(gen.random_flop(rng.choice(flids), flids))
        elif roll < 0.75:
            out.append(gen.schedule(rng.choice(("ADD", "UPD", "ADFT")), [rng.choice(flids)]))
        elif roll < 0.77:
            out.append(gen.schedule("ADD", [next_flid]))
            flids.append(next_flid)
            next_flid += 1
        elif roll < 0.79:
            victim = rng.choice(flids)
            out.append(
                gen.schedule_delete(victim)
                if rng.random() < 0.5
                else gen.flop("FDEL", victim, "<FDEL></FDEL>")
            )
        elif roll < 0.85:
            out.append(gen.reference())
        elif roll < 0.86:
            out.append(gen.envelope("SCHS", "UPD", "<SCHS><X>1</X></SCHS>"))
        elif roll < 0.93:
            out.append(rng.choice(out[-200:]))  # an exact resend: a business duplicate
        else:
            out.append(gen.broken())
    return out


def flop_backlog(count: int, *, flights: int = 2000, seed: int = 7) -> list[str]:
    """*count* messages: one SCHD DNLD per 50 flights, then FLOP updates (benchmarks)."""
    gen = TrafficGenerator(seed)
    flids = list(range(1, flights + 1))
    out = [gen.schedule("DNLD", flids[i : i + 50]) for i in range(0, flights, 50)]
    while len(out) < count:
        flid = gen.rng.choice(flids)
        out.append(gen.time_flop(flid) if gen.rng.random() < 0.6 else gen.random_flop(flid, flids))
    return out[:count]
