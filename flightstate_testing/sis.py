"""SIS message texts spelled out by hand, with a fixed META (docs/protocol.md §1).

For tests that state the very XML a message carries: codec tests (a missing FLID, an
over-long SEQN, a hostile entity), review cases, one FLOP into a store. Each builder is
plain string formatting, so the text is exactly what the arguments say, valid or not;
the same arguments give the same bytes (digest tests rely on it). Defaults: declaration,
SNDR ``AODB``, SEQN ``1243``, DTTM ``20211010090311``, FLID ``15``.

Messages built from model objects instead are ``flightstate_testing.models``; generated
traffic (a day of mixed messages, a backlog) is ``flightstate_testing.traffic``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Final

__all__ = ["DECLARATION", "DTTM", "SEQN", "flop", "fltr", "message", "meta", "schd", "sis_time"]

DECLARATION: Final = '<?xml version="1.0" encoding="UTF-8"?>\n'
SEQN: Final = "1243"
DTTM: Final = "20211010090311"
_MONTHS: Final = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV",
                  "DEC")  # fmt: skip


def sis_time(moment: datetime) -> str:
    """*moment* as a SIS time value, ``DDMONYYHHMM`` (``23JAN210535``)."""
    return f"{moment.day:02d}{_MONTHS[moment.month - 1]}{moment.year % 100:02d}{moment:%H%M}"


def meta(type_: str, styp: str, *, seqn: str = SEQN, dttm: str = DTTM, sndr: str = "AODB") -> str:
    """A META block."""
    return (
        f"<META><SNDR>{sndr}</SNDR><SEQN>{seqn}</SEQN><DTTM>{dttm}</DTTM>"
        f"<TYPE>{type_}</TYPE><STYP>{styp}</STYP></META>"
    )


def message(
    type_: str, styp: str, payload: str, *, seqn: str = SEQN, dttm: str = DTTM, sndr: str = "AODB"
) -> str:
    """A whole message: declaration, ``<MSG>``, META, *payload*."""
    return f"{DECLARATION}<MSG>{meta(type_, styp, seqn=seqn, dttm=dttm, sndr=sndr)}{payload}</MSG>"


def flop(
    styp: str, body: str, flid: str = "15", *, seqn: str = SEQN, dttm: str = DTTM,
    sndr: str = "AODB",
) -> str:  # fmt: skip
    """A FLOP message with one block, ``<FLOP><FLID>flid</FLID>body</FLOP>``."""
    block = f"<FLOP><FLID>{flid}</FLID>{body}</FLOP>"
    return message("FLOP", styp, block, seqn=seqn, dttm=dttm, sndr=sndr)


def fltr(body: str, flid: str = "15") -> str:
    """One schedule record, ``<FLTR><FLID>flid</FLID>body</FLTR>``."""
    return f"<FLTR><FLID>{flid}</FLID>{body}</FLTR>"


def schd(
    styp: str, *fltrs: str, recs: int | str | None = "count", seqn: str = SEQN,
    dttm: str = DTTM, sndr: str = "AODB",
) -> str:  # fmt: skip
    """A SCHD message of these FLTRs; RECS is their count unless *recs* says (None: no
    RECS element, as a Set-only ADFT/ADD/UPD may come)."""
    count = len(fltrs) if recs == "count" else recs
    recs_xml = "" if count is None else f"<RECS>{count}</RECS>"
    payload = f"<SCHD>{recs_xml}{''.join(fltrs)}</SCHD>"
    return message("SCHD", styp, payload, seqn=seqn, dttm=dttm, sndr=sndr)
