"""The SIS codec: raw XML <-> ``flightstate_core.domain.messages``.

- ``decode(raw, config=None) -> Message``: hardened parse (no DOCTYPE, no entities, no
  network, size limit), envelope, payload by TYPE; any protocol violation raises
  ``ProtocolError(xpath, reason)`` naming the element or attribute.
- ``encode(message) -> bytes``: canonical XML such that ``decode(encode(m)) == m``.
- ``decode_envelope(raw, config=None) -> Envelope``: only META, for messages whose payload
  is broken (the SUBSYSTEM columns of a DEAD row).

The payload digest is documented in ``flightstate_core.domain.codec._digest``.
"""

from __future__ import annotations

from flightstate_core.domain.codec._decode import decode
from flightstate_core.domain.codec._decode import decode_envelope_only as decode_envelope
from flightstate_core.domain.codec._encode import encode

__all__ = ["decode", "decode_envelope", "encode"]
