"""Lossless JSON text of a document column (SRVT, VIPF, MAFL), the same on every store.

A document is a non-empty tuple of ``DocItem``; each item is written as a JSON object pair
by pair, in the item's order, and a nested group (VIPF's VIPT) as an array of objects.
Non-ASCII is written as is (UTF-8), never escaped; ``""`` lives inside the text, so the
column itself is NULL only for an absent document.

Repeated keys: one rule for every store. A state whose document item holds a code twice is
refused before anything is written (``validation.validate``), because JSON objects with
repeated names are read differently by every other reader (PostgreSQL's ``jsonb`` and a
Python ``dict`` keep only the last value), so such a text would be lossless only to this
module. The SIS decoder never builds one (each child is taken once, repeated nested
elements become one array), so the rule refuses only states built by other code. Reading
keeps the pairs of a stored text exactly as they are (it never collapses them).
"""

from __future__ import annotations

import json
from typing import Any, overload

from flightstate_core.domain.items import DocItem, DocValue

__all__ = ["decode_document", "encode_document"]

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _encode_item(item: DocItem) -> str:
    pairs = (f"{_dumps(code)}:{_encode_value(value)}" for code, value in item.values)
    return "{" + ",".join(pairs) + "}"


def _encode_value(value: DocValue) -> str:
    if isinstance(value, str):
        return _dumps(value)
    return "[" + ",".join(_encode_item(item) for item in value) + "]"


# Texts by identity of the document's tuple (frozen items never change; the entry keeps
# the tuple alive, so its id is not reused while cached): a FLOP rarely touches a
# document, yet every save writes the flight's whole main row. Emptied when full.
_TEXTS: dict[int, tuple[tuple[DocItem, ...], str]] = {}
_TEXTS_LIMIT = 8192


@overload
def encode_document(items: tuple[DocItem, ...]) -> str: ...
@overload
def encode_document(items: None) -> None: ...
@overload
def encode_document(items: tuple[DocItem, ...] | None) -> str | None: ...
def encode_document(items: tuple[DocItem, ...] | None) -> str | None:
    """JSON text of a document, None when absent."""
    if items is None:
        return None
    entry = _TEXTS.get(id(items))
    if entry is not None and entry[0] is items:
        return entry[1]
    text = _encode_value(items)
    if type(items) is tuple:
        if len(_TEXTS) >= _TEXTS_LIMIT:
            _TEXTS.clear()
        _TEXTS[id(items)] = (items, text)
    return text


def _pairs_hook(pairs: list[tuple[str, Any]]) -> DocItem:
    values: list[tuple[str, DocValue]] = []
    for code, value in pairs:
        if type(value) is list:
            if not all(type(entry) is DocItem for entry in value):
                raise ValueError(f"document group {code} must be a list of objects")
            values.append((code, tuple(value)))
        elif type(value) is str:
            values.append((code, value))
        else:
            raise ValueError(f"document value of {code} must be text or a list")
    return DocItem(tuple(values))


@overload
def decode_document(text: str) -> tuple[DocItem, ...]: ...
@overload
def decode_document(text: None) -> None: ...
@overload
def decode_document(text: str | None) -> tuple[DocItem, ...] | None: ...
def decode_document(text: str | None) -> tuple[DocItem, ...] | None:
    """The document a stored JSON text holds (pairs as stored), None for NULL."""
    if text is None:
        return None
    data = json.loads(text, object_pairs_hook=_pairs_hook)
    if type(data) is not list or not all(type(entry) is DocItem for entry in data):
        raise ValueError("a stored document must be a JSON array of objects")
    return tuple(data)
