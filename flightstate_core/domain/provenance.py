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
from collections.abc import Iterable, Iterator, Mapping
from json.encoder import encode_basestring
from typing import Any, Final

__all__ = [
    "STATE_KEY",
    "Kept",
    "Stamps",
    "collection_keys",
    "decode",
    "describe",
    "encode",
    "encode_raised",
    "item_key",
    "newest",
    "stamp",
    "stored_text",
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
    late for this flight, and the rule costs it nothing more than this comparison
    (``Stamps`` keeps it)."""
    if isinstance(provenance, Stamps):
        return provenance.top
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


class Stamps(dict[str, int]):
    """A provenance map that knows its highest id (``top``) and a stored text of itself
    (``text``, with ``entries`` pairs in it, plus the ``pending`` pairs stamped since), so
    that saving a flight after a message stamped a few keys appends those pairs instead of
    encoding the whole map again: the pump saves a flight per message, and a schedule
    package stamps some fifty keys (``encode``). Memory only: compared as a dict."""

    __slots__ = ("entries", "pending", "text", "top")

    def __init__(
        self, *args: Any, text: str | None = None, entries: int = 0, top: int | None = None
    ) -> None:
        super().__init__(*args)
        self.text = text
        self.entries = entries
        self.pending: tuple[tuple[str, int], ...] = ()
        self.top = max(self.values(), default=0) if top is None else top


_NEW: Final = dict.__new__
_UPDATE: Final = dict.update


def stamp(provenance: Mapping[str, int], keys: Iterable[str], mid: int) -> Mapping[str, int]:
    """*provenance* with *keys* stamped *mid* where that raises their stamp (a stamp
    never goes down); the same map when nothing changes."""
    top = newest(provenance)
    if mid > top:  # in order (the usual case): every key is raised, none to compare
        raised = [(key, mid) for key in keys]
        top = mid
    else:
        raised = [(key, mid) for key in keys if provenance.get(key, 0) < mid]
    if not raised:
        return provenance
    result = _NEW(Stamps)  # not ``Stamps(...)``: a message pays this copy once per flight
    _UPDATE(result, provenance)
    _UPDATE(result, raised)
    result.top = top
    if isinstance(provenance, Stamps) and provenance.text is not None:
        result.text, result.entries = provenance.text, provenance.entries
        result.pending = (*provenance.pending, *raised)
    else:
        result.text, result.entries, result.pending = None, 0, ()
    return result


#: Entries a stored text may hold beyond the keys (overwritten ones) before it is
#: written afresh: the text stays near one entry per key.
_SLACK: Final = 16


def _groups(pairs: Iterable[tuple[str, int]]) -> str:
    """``[id,"KEY",...]`` per id, ids in first-seen order: keys stamped by one message
    (a package stamps some fifty) share their id, so the text is about 8 bytes a key."""
    by_id: dict[int, list[str]] = {}
    for key, mid in pairs:
        by_id.setdefault(mid, []).append(encode_basestring(key))
    return ",".join([f"[{mid},{','.join(keys)}]" for mid, keys in by_id.items()])


def encode(provenance: Mapping[str, int]) -> str | None:
    """The stored text of a map (NULL when empty): a JSON array of groups
    ``[id, key, ...]``; a key in a later group wins (``Stamps`` appends its pending
    stamps to the text it was read or last written as, and writes it afresh once it holds
    more than 16 overwritten entries)."""
    if not provenance:
        return None
    if not isinstance(provenance, Stamps):
        return f"[{_groups(provenance.items())}]"
    text, pending = provenance.text, provenance.pending
    entries = provenance.entries + len(pending)
    if text is None or entries > len(provenance) + _SLACK:
        text, entries = f"[{_groups(provenance.items())}]", len(provenance)
    elif pending:
        text = f"{text[:-1]},{_groups(pending)}]"
    else:
        return text
    provenance.text, provenance.entries, provenance.pending = text, entries, ()  # remembered
    return text


def encode_raised(provenance: Mapping[str, int]) -> str | None:
    """``encode`` for a save that writes the stamps alone (a re-send: same version and
    audit fields): its text never has the byte length of the text it replaces (the
    raised pairs are appended instead of a rewrite that would), so a cache of states
    validated by that length together with the version sees the write
    (``flightstate_pg._cache``)."""
    if not isinstance(provenance, Stamps) or provenance.text is None or not provenance.pending:
        return encode(provenance)
    old, entries, pending = provenance.text, provenance.entries, provenance.pending
    text = encode(provenance)
    if text is None or len(text.encode()) != len(old.encode()):
        return text
    text = f"{old[:-1]},{_groups(pending)}]"  # longer than the old text by the groups
    provenance.text, provenance.entries = text, entries + len(pending)
    return text


def stored_text(provenance: Mapping[str, int]) -> str | None:
    """The text a map was last read or written as, without encoding it again (``encode``
    when it has none, or has stamps pending)."""
    if isinstance(provenance, Stamps) and provenance.text is not None and not provenance.pending:
        return provenance.text
    return encode(provenance)


def decode(text: str | None, where: str = "PROVENANCE") -> Mapping[str, int]:
    """The map of a stored text; NULL (a flight written before provenance) is empty: no
    key is newer than any message. A JSON object of key: id is read too (a hand edit)."""
    if not text:
        return {}
    value = json.loads(text)
    if isinstance(value, dict):
        found = Stamps(value)
    elif isinstance(value, list) and all(
        isinstance(group, list) and group and type(group[0]) is int for group in value
    ):
        found = Stamps()
        entries = 0
        for mid, *keys in value:
            entries += len(keys)
            for key in keys:
                found[key] = mid
        found.text, found.entries, found.top = text, entries, max(found.values(), default=0)
    else:
        raise ValueError(f"{where}: not a list of [message id, key...] groups: {text[:80]!r}")
    for key, mid in found.items():
        if not isinstance(key, str) or type(mid) is not int:
            raise ValueError(f"{where}: not a list of [message id, key...] groups: {text[:80]!r}")
    return found
