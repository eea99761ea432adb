"""Small helpers shared by the service fixtures."""

from __future__ import annotations

import secrets
from urllib.parse import quote, urlsplit, urlunsplit

__all__ = ["unique_name", "url_with_database"]


def unique_name(prefix: str) -> str:
    """Return ``<prefix>_<12 hex chars>``: a valid SQL identifier and Kafka topic name."""
    return f"{prefix}_{secrets.token_hex(6)}"


def url_with_database(url: str, database: str) -> str:
    """Return *url* (``scheme://...``) with its path replaced by ``/<database>``; query kept."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + quote(database)))
