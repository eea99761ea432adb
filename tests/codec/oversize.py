"""Messages whose envelope or indexed values are over-long or out of range (docs/design.md,
"Poison-proof bounds"): each must end DEAD naming the value, never stop the pump.

Shared by the codec test, the pure PROC_STATE row test (PostgreSQL and Oracle builders) and
the end-to-end pump test: each case is (name, raw XML, the XPath its ProtocolError names).
"""

from __future__ import annotations

import random
import string

from flightstate_core.domain.limits import FLID_MAX_BYTES, INDEXED_VALUE_MAX_BYTES
from flightstate_testing.sis import flop, fltr, message, schd

_RANDOM = random.Random(18)
_FLID = "9001"  # the FLOP cases' flight


def noise(alphabet: str, length: int) -> str:
    """Deterministic random text: a database cannot compress it below its index limit (a
    run of one repeated character would compress and hide the problem)."""
    return "".join(_RANDOM.choices(alphabet, k=length))


#: 22 Chinese characters: 66 UTF-8 bytes (over Oracle's 64-byte MSG_STYP, under 64 chars).
CHINESE_22 = "航" * 22


def remark(flid: str = _FLID, text: str = "ok", **meta: str) -> str:
    """A valid FLOP REMC (the FIFO's good neighbours)."""
    return flop("REMC", f"<REMC>{text}</REMC>", flid, **meta)


_LONG_FLID = noise(string.digits, FLID_MAX_BYTES + 1)
_LONG_CODE = noise(string.ascii_uppercase, INDEXED_VALUE_MAX_BYTES + 1)
_CHINESE_CODE = "门" * (INDEXED_VALUE_MAX_BYTES // 3 + 1)  # 134 characters, 402 bytes


def _collection(code: str, seq_attr: str, child: str, value: str) -> tuple[str, str, str]:
    raw = flop(code, f'<{code} {seq_attr}="1"><{child}>{value}</{child}></{code}>', _FLID)
    return (f"flop_{code}_{child}", raw, f"/MSG/FLOP[1]/{code}[1]/{child}")


OVERSIZE_CASES: tuple[tuple[str, str, str], ...] = (
    ("seqn_3000_digits", remark(seqn=noise(string.digits, 3000)), "/MSG/META/SEQN"),
    ("seqn_19_digits", remark(seqn="9" * 19), "/MSG/META/SEQN"),
    ("sndr_6000", remark(sndr=noise(string.ascii_letters, 6000)), "/MSG/META/SNDR"),
    ("sndr_chinese_22", remark(sndr=CHINESE_22), "/MSG/META/SNDR"),
    (
        "styp_unknown_6000",
        flop(noise(string.ascii_uppercase, 6000), "<REMC>x</REMC>", _FLID),
        "/MSG/META/STYP",
    ),
    ("styp_65_bytes", flop("X" * 65, "<REMC>x</REMC>", _FLID), "/MSG/META/STYP"),
    ("styp_chinese_22", flop(CHINESE_22, "<REMC>x</REMC>", _FLID), "/MSG/META/STYP"),
    ("type_6000", message(noise(string.ascii_uppercase, 6000), "REMC", "<X/>"), "/MSG/META/TYPE"),
    ("dttm_year_0001", remark(dttm="00010101000000"), "/MSG/META/DTTM"),
    ("dttm_year_9999", remark(dttm="99991231235959"), "/MSG/META/DTTM"),
    ("flop_flid_2705", remark(flid=noise(string.digits, 2705)), "/MSG/FLOP[1]/FLID"),
    ("flop_flid_65", remark(flid=_LONG_FLID), "/MSG/FLOP[1]/FLID"),
    ("flop_flid_chinese_22", remark(flid=CHINESE_22), "/MSG/FLOP[1]/FLID"),
    (
        "schd_flid_65",
        schd("DNLD", fltr("", _LONG_FLID)),
        "/MSG/SCHD/FLTR[1]/FLID",
    ),
    ("flop_maid", flop("CSOP", f"<MAID>{_LONG_CODE}</MAID>", _FLID), "/MSG/FLOP[1]/MAID"),
    _collection("GTDT", "GTNO", "GATE", _LONG_CODE),
    _collection("GTDT", "GTNO", "GATE", _CHINESE_CODE),
    _collection("CKDT", "CKNO", "CHKC", _LONG_CODE),
    _collection("CLDT", "CLNO", "BELT", _LONG_CODE),
    _collection("PSDT", "PSNO", "PSST", _LONG_CODE),
    _collection("CHDT", "CHNO", "CHUT", _LONG_CODE),
    _collection("ABTM", "ASNO", "ABDG", _LONG_CODE),
    (
        "schd_gate",
        schd(
            "DNLD",
            fltr(f'<GTDT GTNO="1"><GATE>{_LONG_CODE}</GATE></GTDT>', "9002"),
        ),
        "/MSG/SCHD/FLTR[1]/GTDT[1]/GATE",
    ),
)

#: Values exactly at their limits: accepted.
AT_LIMIT_CASES: tuple[tuple[str, str], ...] = (
    ("seqn_18_digits", remark(seqn="9" * 18)),
    ("sndr_64", remark(sndr="S" * 64)),
    ("sndr_chinese_21", remark(sndr="航" * 21)),
    ("dttm_1970", remark(dttm="19700101000000")),
    ("dttm_2099", remark(dttm="20991231235959")),
    ("flid_64", remark(flid="9" * FLID_MAX_BYTES)),
    ("gate_400", flop("GTDT", f'<GTDT GTNO="1"><GATE>{"G" * 400}</GATE></GTDT>', _FLID)),
    ("maid_400", flop("CSOP", f"<MAID>{'M' * 400}</MAID>", _FLID)),
)
