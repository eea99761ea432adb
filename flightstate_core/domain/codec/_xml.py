"""Hardened XML parsing for SIS messages.

Why: the inbox is written by a system we do not control. A message must never make us
read a file, open a URL, expand an entity or build an unbounded tree. So:

1. the size is checked (``CoreConfig.max_message_bytes``) before any parsing;
2. any ``<!DOCTYPE`` is refused before parsing (billion laughs, external entities and
   DTD tricks all need one), and again after parsing as a backstop for encodings the
   byte scan cannot see (UTF-16/32);
3. lxml runs with ``resolve_entities=False, no_network=True, load_dtd=False,
   dtd_validation=False, huge_tree=False``; comments, processing instructions and
   indentation-only text between elements are dropped by the parser (they carry no
   values; a leaf's text, even blank, is kept);
4. a ``str`` input is parsed as UTF-8 whatever its declaration says (the inbox column is
   already text), a ``bytes`` input honours its declaration.

Parsers are kept per thread: an lxml parser must not be shared by concurrent threads.
"""

from __future__ import annotations

import threading
from typing import Any

from lxml import etree

from flightstate_core.domain.errors import ProtocolError

__all__ = ["parse_message"]

_DOCTYPE_MARKERS = (
    b"<!DOCTYPE",
    "<!DOCTYPE".encode("utf-16-le"),
    "<!DOCTYPE".encode("utf-16-be"),
)


class _Parsers(threading.local):
    def __init__(self) -> None:
        options = {
            "resolve_entities": False,
            "no_network": True,
            "dtd_validation": False,
            "load_dtd": False,
            "huge_tree": False,
            "remove_comments": True,
            "remove_pis": True,
            "remove_blank_text": True,  # indentation between elements; leaf text is kept
        }
        self.declared = etree.XMLParser(**options)  # type: ignore[arg-type]
        self.utf8 = etree.XMLParser(encoding="utf-8", **options)  # type: ignore[arg-type]


_PARSERS = _Parsers()


def _to_bytes(raw: bytes | str) -> bytes:
    if not isinstance(raw, str):
        return bytes(raw)  # the same object for bytes; a copy of a bytearray / memoryview
    try:
        return raw.encode("utf-8")
    except UnicodeEncodeError as exc:  # lone surrogates cannot be XML
        raise ProtocolError("/", f"message text is not valid Unicode: {exc.reason}") from None


def _syntax_error(exc: etree.XMLSyntaxError) -> ProtocolError:
    line, column = exc.position
    return ProtocolError("/", f"not well-formed XML at line {line}, column {column}: {exc.msg}")


def parse_message(raw: bytes | str, max_bytes: int) -> etree._Element:
    """Parse one message into its root element, or raise ``ProtocolError``."""
    data = _to_bytes(raw)
    if len(data) > max_bytes:
        raise ProtocolError("/", f"message is {len(data)} bytes, over the {max_bytes} limit")
    if any(marker in data for marker in _DOCTYPE_MARKERS):
        raise ProtocolError("/", "a DOCTYPE is not allowed in a SIS message")
    parser = _PARSERS.utf8 if isinstance(raw, str) else _PARSERS.declared
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise _syntax_error(exc) from None
    except (etree.LxmlError, ValueError, LookupError) as exc:
        raise ProtocolError("/", f"unreadable XML: {exc}") from None
    if root is None:
        raise ProtocolError("/", "empty document")
    docinfo: Any = root.getroottree().docinfo
    if docinfo.doctype or docinfo.internalDTD is not None:
        raise ProtocolError("/", "a DOCTYPE is not allowed in a SIS message")
    return root
