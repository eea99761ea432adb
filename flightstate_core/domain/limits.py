"""Size and range bounds on message values that reach a column or an index (pure).

Why: a value the protocol leaves unbounded can still be too long for the database. PROC_STATE's
identity index and every FLID primary key are B-trees (PostgreSQL refuses an index row over
2,704 bytes), and Oracle 11g columns are VARCHAR2 with byte limits (FLID 64, codes 400,
MSG_TYPE/MSG_STYP 64). A message that breaks such a limit must end DEAD with a reason naming
its element, and its DEAD record must itself be writable, so:

- the codec rejects over-long values with a ``ProtocolError`` (envelope fields, FLID, every
  value stored in an indexed column, DTTM outside ``DTTM_YEARS``);
- the service stores keys and display values of a PROC_STATE row in bounded form whatever
  the envelope holds (``bounded_key``, ``bounded_display``), so even an envelope built by
  other code cannot make the DEAD record unwritable.

Lengths are UTF-8 bytes (Oracle counts bytes in an AL32UTF8 database; ``利`` is 3).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

__all__ = [
    "DTTM_YEARS",
    "ENVELOPE_TEXT_MAX_BYTES",
    "FLID_MAX_BYTES",
    "IDENTITY_KEY_MAX_BYTES",
    "INDEXED_CHILDREN",
    "INDEXED_SCALARS",
    "INDEXED_VALUE_MAX_BYTES",
    "SEQN_MAX_DIGITS",
    "bounded_display",
    "bounded_key",
    "over_limit",
    "utf8_len",
]

#: SNDR, TYPE, STYP: Oracle's MSG_TYPE / MSG_STYP are VARCHAR2(64 BYTE).
ENVELOPE_TEXT_MAX_BYTES: Final = 64
#: SEQN: the sender's counter (six digits, wrapping); 18 digits always fit a signed 64-bit
#: integer, so the number never overflows a bigint / NUMBER(19) wherever it is parsed.
SEQN_MAX_DIGITS: Final = 18
#: DTTM years accepted (inclusive). A message's send time outside them is absurd
#: (docs/protocol.md §1: year 0001 or 9999 is a protocol error), and year 0001 local
#: cannot even be moved to UTC.
DTTM_YEARS: Final = (1970, 2099)
#: FLID: every flight table's primary key; Oracle's FLID columns are VARCHAR2(64 BYTE).
FLID_MAX_BYTES: Final = 64
#: Values stored in an indexed column beside FLID (Oracle VARCHAR2(400 BYTE) code columns).
INDEXED_VALUE_MAX_BYTES: Final = 400
#: PROC_STATE.IDENTITY_KEY (Oracle VARCHAR2(400 BYTE), inside PostgreSQL's index row limit).
IDENTITY_KEY_MAX_BYTES: Final = 400

#: Scalar codes stored in an indexed column (FLIGHT_SCHD_MAID_IX) -> byte limit.
INDEXED_SCALARS: Final[Mapping[str, int]] = MappingProxyType({"MAID": INDEXED_VALUE_MAX_BYTES})
#: Collection code -> {child code stored in an indexed column: byte limit} (the look-up
#: indexes of migration 0002: gate, check-in counter, belt, stand, chute, bridge).
INDEXED_CHILDREN: Final[Mapping[str, Mapping[str, int]]] = MappingProxyType(
    {
        collection: MappingProxyType({child: INDEXED_VALUE_MAX_BYTES})
        for collection, child in (
            ("GTDT", "GATE"),
            ("CKDT", "CHKC"),
            ("CLDT", "BELT"),
            ("PSDT", "PSST"),
            ("CHDT", "CHUT"),
            ("ABTM", "ABDG"),
        )
    }
)

_MAX_UTF8_BYTES_PER_CHAR: Final = 4
_HASH_PREFIX: Final = "sha256:"


def utf8_len(text: str) -> int:
    """Length of *text* in UTF-8 bytes."""
    return len(text.encode("utf-8", "surrogatepass"))


def over_limit(text: str, limit: int) -> int | None:
    """The UTF-8 byte length of *text* if it is over *limit*, else None (cheap when short)."""
    if len(text) * _MAX_UTF8_BYTES_PER_CHAR <= limit:
        return None
    size = utf8_len(text)
    return size if size > limit else None


def bounded_display(text: str | None, limit: int) -> str | None:
    """*text* cut to at most *limit* UTF-8 bytes on a character boundary (for display
    columns: MSG_TYPE, MSG_STYP)."""
    if text is None or over_limit(text, limit) is None:
        return text
    cut = text.encode("utf-8", "surrogatepass")[: limit - 3].decode("utf-8", "ignore")
    return cut + "..."


def bounded_key(key: str, limit: int = IDENTITY_KEY_MAX_BYTES) -> str:
    """*key* itself when it fits *limit* bytes, else ``sha256:<hex>`` of it: two over-long
    keys are still equal exactly when their texts are, and the stored key stays bounded."""
    if over_limit(key, limit) is None:
        return key
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
    return _HASH_PREFIX + digest
