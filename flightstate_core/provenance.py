"""Per-key provenance: which message last set or cleared each part of a flight (docs/design.md,
"Late rows and provenance").

Why: a late row (an inbox id committed after the pump went past it) is applied after
messages with higher ids. Applied "like any later message" it would roll back what those
newer messages set. Each flight therefore keeps, per key, the highest message id that set
or cleared it, and a message older than a key's provenance leaves that key as it is.

Keys (strings, so the map is a JSON object in both stores):

- a scalar code (exception objects are flat scalar parts already: ``FDIV_DDES``...);
- a document code;
- a collection code, for a Replace or Clear of the whole collection;
- ``CODE:seq`` for one seq of a collection merged by seq (``CODE!`` when the seq attribute
  is absent); a PSHT/TIPT stand update marks the PSDT items it matched;
- ``state`` for the lifecycle status (set by a delete or a revival).

Pure: no drivers; the stores keep the map as JSON text (``encode`` / ``decode``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Final

__all__ = [
    "STATE_KEY",
    "Kept",
    "collection_keys",
    "decode",
    "describe",
    "encode",
    "item_key",
    "newest",
]

STATE_KEY: Final = "state"

#: (key, the newer message id that set it): what a late message left as it was.
Kept = tuple[str, int]


def item_key(code: str, seq: str | None) -> str:
    """The key of one seq of a collection merged by seq."""
    return f"{code}!" if seq is None else f"{code}:{seq}"


def collection_keys(provenance: Mapping[str, int], code: str) -> Iterator[tuple[str, int]]:
    """Every (key, id) of one collection: the whole collection and each of its seqs."""
    prefixes = (f"{code}:", f"{code}!")
    for key, mid in provenance.items():
        if key == code or key.startswith(prefixes):
            yield key, mid


def newest(provenance: Mapping[str, int]) -> int:
    """The highest message id in the map (0 when empty): a message at or above it is not
    late for this flight, and the rule costs it nothing more than this comparison."""
    return max(provenance.values(), default=0)


def describe(kept: Kept) -> str:
    """``GTDT seq 2 (set by message 1234)`` for a decision's note."""
    key, mid = kept
    code, colon, seq = key.partition(":")
    if colon:
        name = f"{code} seq {seq}"
    elif key.endswith("!") and len(key) > 1:
        name = f"{key[:-1]} item without seq"
    elif key == STATE_KEY:
        name = "DELETED"
    else:
        name = key
    return f"{name} (set by message {mid})"


def encode(provenance: Mapping[str, int]) -> str | None:
    """The stored text of a map (NULL when empty)."""
    if not provenance:
        return None
    return json.dumps(provenance, separators=(",", ":"), ensure_ascii=False)


def decode(text: str | None, where: str = "PROVENANCE") -> dict[str, int]:
    """The map of a stored text; NULL (a flight written before provenance) is empty: no
    key is newer than any message."""
    if not text:
        return {}
    value = json.loads(text)
    if not isinstance(value, dict) or not all(
        isinstance(key, str) and isinstance(mid, int) and not isinstance(mid, bool)
        for key, mid in value.items()
    ):
        raise ValueError(f"{where}: not a JSON object of message ids: {text[:80]!r}")
    return value
