"""The payload digest: SHA-256 (hex) of a canonical serialization of the payload.

The payload is every child of MSG except META, in document order (for SCHD: the SCHD
element with its RECS; for reference data: RECS and the records).

Canonical form: each payload element is serialized with exclusive XML Canonicalization
1.0 (W3C C14N, done by libxml2 in C), and the bytes are hashed in order. The tree comes
from the codec's parser, which drops indentation-only text between elements
(``remove_blank_text``) but keeps a leaf's text exactly (``<X> </X>`` stays ``" "``).

So the digest does not change with indentation or line breaks, spaces around ``=`` or
inside tags, attribute order or quoting, ``<X/>`` versus ``<X></X>``, character
references versus literal characters, comments, the XML declaration, or namespace
declarations the payload does not use. Any change of a value (text, attribute, seq,
RECS), of the order of elements, or an added or removed element changes it. Re-encoding a
decoded message may reorder a record's elements into catalog order, which gives a
different digest: the digest identifies what a sender sent, not what it meant.

C14N refuses a document that declares a relative namespace URI (even unused, e.g. on
MSG). Such a payload element is digested from libxml2's plain serialization instead,
behind a marker so it can never collide with a canonical one; that form is still
independent of indentation but depends on attribute order.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from lxml import etree

from flightstate_core.domain.codec._common import Element

__all__ = ["payload_digest"]

_FALLBACK = b"\x00not-c14n\x00"


def payload_digest(elements: Iterable[Element]) -> str:
    """SHA-256 hex over the exclusive C14N bytes of each payload element, in order."""
    digest = hashlib.sha256()
    for element in elements:
        try:
            digest.update(etree.tostring(element, method="c14n", exclusive=True))
        except etree.C14NError:
            digest.update(_FALLBACK + etree.tostring(element, encoding="utf-8"))
    return digest.hexdigest()
