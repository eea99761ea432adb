"""Generates ``flightstate_core/schemas/{schd,msg}.schema.json`` from the catalog.

Run ``python -m tests.core.schema_gen`` after a catalog change; ``test_schemas.py``
fails while the stored files differ from what this produces. Independent of
``wire.py``'s plans on purpose: the schema is built from the catalog and layout only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flightstate_core.domain.catalog import COLLECTIONS, DOCUMENTS, EXCEPTIONS, SCALARS, ChildSpec
from flightstate_core.domain.layout import typed_column_name

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "flightstate_core" / "schemas"
NULLABLE_STRING = {"type": ["string", "null"]}
TYPED = {
    "TIME": {"type": ["string", "null"], "format": "date-time"},
    "DATE": {"type": ["string", "null"], "format": "date"},
    "DURATION": {"type": ["integer", "null"], "minimum": 0},
}


def _value_and_twin(code: str, kind: Any) -> dict[str, Any]:
    props: dict[str, Any] = {code: NULLABLE_STRING}
    twin = typed_column_name(code, kind)
    if twin is not None:
        props[twin] = TYPED[kind.value]
    return props


def _item_schema(children: tuple[ChildSpec, ...]) -> dict[str, Any]:
    props: dict[str, Any] = {
        "ordinal": {"type": "integer", "minimum": 1},
        "seq": NULLABLE_STRING,
    }
    for child in children:
        props.update(_value_and_twin(child.code, child.kind))
    return {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }


def _doc_schema(children: tuple[ChildSpec, ...], nested: dict[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = {child.code: {"type": "string"} for child in children}
    for code, group in nested.items():
        props[code] = {"type": "array", "items": _doc_schema(group, {})}
    return {"type": "object", "properties": props, "additionalProperties": False}


def _exception_schema(code: str) -> dict[str, Any]:
    spec = EXCEPTIONS[code]
    props: dict[str, Any] = {"text": NULLABLE_STRING}
    for attr, part in spec.attributes.items():
        allowed = SCALARS[part].allowed
        props[attr] = {"enum": [*sorted(allowed), None]} if allowed is not None else NULLABLE_STRING
    return {
        "oneOf": [
            {"type": "null"},
            {"type": "object", "properties": props, "required": list(props),
             "additionalProperties": False},
        ]
    }  # fmt: skip


def build_schd_schema() -> dict[str, Any]:
    """JSON Schema of a ``schd`` value."""
    props: dict[str, Any] = {
        "flid": {"type": "string", "minLength": 1},
        "state": {"enum": ["ACTIVE", "DELETED"]},
        "stateVersion": {"type": "integer", "minimum": 1},
        "updatedAt": {"type": ["string", "null"], "format": "date-time"},
        "operationDay": {"type": ["string", "null"], "format": "date"},
        "lastMessageId": {"type": ["integer", "null"]},
    }
    parts = {p for spec in EXCEPTIONS.values() for p in (spec.text_part, *spec.attributes.values())}
    for spec in SCALARS.values():
        if spec.code not in parts:
            props.update(_value_and_twin(spec.code, spec.kind))
    for code in EXCEPTIONS:
        props[code] = _exception_schema(code)
    for code, cspec in COLLECTIONS.items():
        props[code] = {"type": "array", "items": _item_schema(cspec.children)}
    for code, dspec in DOCUMENTS.items():
        props[code] = {"type": "array", "items": _doc_schema(dspec.children, dict(dspec.nested))}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://flightstate/schemas/schd.schema.json",
        "title": "flightstate schd value (full state of one flight)",
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }


def build_msg_schema() -> dict[str, Any]:
    """JSON Schema of a ``msg`` value."""
    props: dict[str, Any] = {
        "flid": {"type": "string", "minLength": 1},
        "stateVersion": {"type": "integer", "minimum": 1},
        "change": {"enum": ["CREATED", "UPDATED", "DELETED", "CODESHARE"]},
        "changed": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        "messageId": {"type": ["integer", "null"]},
        "type": {"type": "string"},
        "styp": {"type": "string"},
        "codeshare": {"type": "string", "minLength": 1},
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://flightstate/schemas/msg.schema.json",
        "title": "flightstate msg value (change notification)",
        "type": "object",
        "properties": props,
        "required": [key for key in props if key != "codeshare"],
        "additionalProperties": False,
        "if": {"properties": {"change": {"const": "CODESHARE"}}},
        "then": {"required": ["codeshare"]},
        "else": {"not": {"required": ["codeshare"]}},
    }


def render(schema: dict[str, Any]) -> str:
    """Stored form: indented, key order kept, trailing newline."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    """Write both schema files."""
    SCHEMA_DIR.mkdir(exist_ok=True)
    (SCHEMA_DIR / "schd.schema.json").write_text(render(build_schd_schema()), encoding="utf-8")
    (SCHEMA_DIR / "msg.schema.json").write_text(render(build_msg_schema()), encoding="utf-8")


if __name__ == "__main__":
    main()
