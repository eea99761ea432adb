"""Readable text for ``show`` and ``history`` (``--json`` keeps the machine forms).

A flight's wire form names every field the catalog knows, most of them null on any one
flight, so the text view prints the fields that are set: a value, or ``""`` (an explicit
empty value is data, unlike null), and non-empty collections, one item per line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["render_flight", "render_history", "set_fields"]


def _is_unset(value: object) -> bool:
    return value is None or (isinstance(value, list | dict) and not value)


def set_fields(value: Any) -> Any:
    """*value* without null fields and empty collections, recursively ("" is kept)."""
    if isinstance(value, Mapping):
        kept = {key: set_fields(item) for key, item in value.items()}
        return {key: item for key, item in kept.items() if not _is_unset(item)}
    if isinstance(value, list):
        return [set_fields(item) for item in value]
    return value


def _scalar(value: object) -> str:
    if isinstance(value, str):
        return value if value and value.strip() == value else json.dumps(value)
    return json.dumps(value, ensure_ascii=False)


def _item(value: object) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{key}={_item(item)}" for key, item in value.items())
    if isinstance(value, list):
        return "[" + "; ".join(_item(item) for item in value) + "]"
    return _scalar(value)


def render_flight(wire: Mapping[str, Any]) -> str:
    """One ``KEY  value`` line per set field; a collection as a heading and its items."""
    shown = set_fields(wire)
    width = max((len(key) for key in shown), default=0)
    lines: list[str] = []
    for key, value in shown.items():
        if isinstance(value, list):
            lines.append(f"{key} ({len(value)}):")
            lines += [f"  {n}. {_item(item)}" for n, item in enumerate(value, 1)]
        elif isinstance(value, Mapping):
            lines.append(f"{key}:")
            lines += [f"  {k}: {_item(v)}" for k, v in value.items()]
        else:
            lines.append(f"{key.ljust(width)}  {_scalar(value)}")
    return "\n".join(lines)


#: The header of ``history``: DTTM is the sender's time of the message (airport time), not
#: when flightstate applied it.
HISTORY_HEADER = (
    f"{'message':<10} {'TYPE/STYP':<10} {'outcome':<10} {'version':<5} {'change':<8} "
    "sent (DTTM, airport time)  fields changed"
)


def render_history(entries: Sequence[Mapping[str, Any]]) -> str:
    """A header, then one line per message: id, TYPE/STYP, outcome, version, change, the
    sender's time (DTTM), fields."""
    lines = [HISTORY_HEADER]
    for entry in entries:
        changed = entry.get("changed")
        fields = "?" if changed is None else (", ".join(changed) or "-")
        version = entry.get("stateVersion")
        mid = entry.get("messageId")
        lines.append(
            f"{'#' + str(mid) if mid is not None else '(no message)':<10} "
            f"{entry.get('type') or '?'}/{entry.get('styp') or '?':<5} "
            f"{entry.get('status') or '-':<10} v{version if version is not None else '-':<4} "
            f"{entry.get('change') or '-':<8} {entry.get('dttm') or '-'}  {fields}"
            + (f"  [{entry['source']}]" if entry.get("source") not in (None, "event") else "")
            + (f"  ({entry['kept']})" if entry.get("kept") else "")
        )
    return "\n".join(lines)


def render_requests(report: Mapping[str, Any]) -> str:
    """``requests`` as text: the counts, what this call matched, then one line per request
    (id, status, SEQN, attempts, the window asked for, when it was sent)."""
    matched = report["matched"]
    lines = [
        f"requests: {report['open']} open, {report['answered']} answered, "
        f"{report['failed']} failed; {report['unsolicited']} unsolicited response(s)",
        f"matched now: {matched['answered']} answered, {matched['unsolicited']} unsolicited",
    ]
    if report["requests"]:
        lines.append(f"{'id':<6} {'status':<9} {'SEQN':<7} {'tries':<5} window"
                     "  sent")  # fmt: skip
    for item in report["requests"]:
        lines.append(
            f"{item['requestId']:<6} {item['status']:<9} {item['seqn']!s:<7} "
            f"{item['attempts']:<5} {item['windowStart']} .. {item['windowEnd']}  {item['sentAt']}"
        )
    return "\n".join(lines)
