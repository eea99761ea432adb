"""Lossless JSON text for documents (SRVT, VIPF, MAFL).

A document is a tuple of ``DocItem``; each item is an ordered list of (code, value) pairs
where a value is text or a nested tuple of items (VIPF/VIPT). The text is a JSON array of
objects written pair by pair, so key order (and even a repeated key) survives; nested
groups are arrays. Non-ASCII is written as is (UTF-8), never escaped.
"""

from __future__ import annotations

import json
from typing import Any

from flightstate_core.items import DocItem, DocValue

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
    return DocItem(tuple((key, tuple(v) if isinstance(v, list) else v) for key, v in pairs))


def decode_document(text: str | None) -> tuple[DocItem, ...] | None:
    """The document a JSON text holds, None for NULL."""
    if text is None:
        return None
    return tuple(json.loads(text, object_pairs_hook=_pairs_hook))
