"""Document columns (SRVT, VIPF, MAFL): CLOBs holding the core's document JSON text as is
(``flightstate_core.domain.write_plan.documents``: the format and the one rule for repeated keys).
``""`` survives because it lives *inside* the JSON text; the CLOB itself is never empty (an
absent document is NULL). PostgreSQL's twin is ``flightstate_pg._documents`` (text)."""

from __future__ import annotations

from flightstate_core.domain.write_plan.documents import decode_document, encode_document

__all__ = ["decode_document", "encode_document"]
