"""Document columns (SRVT, VIPF, MAFL): PostgreSQL ``text`` holding the core's document
JSON text as is (``flightstate_core.domain.write_plan.documents``: the format and the one rule for
repeated keys). Oracle's twin is ``flightstate_oracle._documents`` (CLOB)."""

from __future__ import annotations

from flightstate_core.domain.write_plan.documents import decode_document, encode_document

__all__ = ["decode_document", "encode_document"]
