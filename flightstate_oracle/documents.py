"""SRVT/VIPF/MAFL documents as lossless JSON text in CLOB columns (pure).

A document is a non-empty tuple of ``DocItem``; each item becomes a JSON object whose keys
keep the item's order, a nested group (VIPF's VIPT) becomes a JSON array of objects. Empty
strings survive because they live *inside* the JSON text; the CLOB itself is never empty
(an absent document is NULL).
"""

from __future__ import annotations

import json
from typing import Any

from flightstate_core.items import DocItem, DocValue

__all__ = ["decode_document", "encode_document"]


def encode_document(items: tuple[DocItem, ...]) -> str:
    """Compact UTF-8 JSON text of a document (keys in item order)."""
    return json.dumps(
        [_item_json(item) for item in items], ensure_ascii=False, separators=(",", ":")
    )


def decode_document(text: str) -> tuple[DocItem, ...]:
    """The document stored as ``text`` by ``encode_document``."""
    data = json.loads(text, object_pairs_hook=_pairs)
    if not isinstance(data, list):
        raise ValueError("a stored document must be a JSON array")
    return tuple(_item(entry) for entry in data)


def _item_json(item: DocItem) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for code, value in item.values:
        if code in out:
            raise ValueError(f"document item has {code} twice")
        out[code] = value if isinstance(value, str) else [_item_json(i) for i in value]
    return out


def _pairs(pairs: list[tuple[str, Any]]) -> tuple[tuple[str, Any], ...]:
    return tuple(pairs)


def _item(entry: Any) -> DocItem:
    if not isinstance(entry, tuple):
        raise ValueError("a document item must be a JSON object")
    values: list[tuple[str, DocValue]] = []
    for code, value in entry:
        if isinstance(value, str):
            values.append((code, value))
        elif isinstance(value, list):
            values.append((code, tuple(_item(sub) for sub in value)))
        else:
            raise ValueError(f"document value of {code} must be text or a list")
    return DocItem(tuple(values))
