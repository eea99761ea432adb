"""Turn a ``mysql://`` URL into PyMySQL ``connect()`` keyword arguments.

PyMySQL has no DSN parser of its own, so the adapter, the runner and the test fixtures all
go through this one function. Accepted form::

    mysql://[user[:password]@]host[:port][/database][?charset=..&unix_socket=..&connect_timeout=..]

``mysql+pymysql://`` and ``mariadb://`` are accepted as aliases. User and password are
percent-decoded. ``charset`` defaults to ``utf8mb4`` because SIS payloads carry Chinese text
and MySQL's legacy ``utf8`` is 3-byte only.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from flightstate_core.support.dsn import check_url_credentials

__all__ = ["parse_mysql_dsn"]

_SCHEMES = frozenset({"mysql", "mysql+pymysql", "mariadb"})
_INT_OPTIONS = frozenset({"connect_timeout", "read_timeout", "write_timeout"})
_STR_OPTIONS = frozenset({"charset", "unix_socket", "init_command", "sql_mode"})
_DEFAULT_PORT = 3306


def parse_mysql_dsn(dsn: str) -> dict[str, Any]:
    """Return PyMySQL ``connect()`` kwargs for *dsn*; raise ``ValueError`` if it is not one.

    The user and password end at the last ``@`` (``flightstate_core.support.dsn``: where the
    redactor hides them); a raw ``/``, ``?``, ``#`` or space in them is refused. Error
    messages never quote the DSN, which may hold a password.
    """
    try:
        parts = urlsplit(dsn)
        port = parts.port
    except ValueError:
        raise ValueError("not a valid mysql:// URL (host or port)") from None
    if parts.scheme not in _SCHEMES:
        schemes = ", ".join(sorted(f"{s}://" for s in _SCHEMES))
        raise ValueError(f"not a mysql:// DSN: its scheme must be one of {schemes}")
    check_url_credentials(dsn, raw_at=True)
    kwargs: dict[str, Any] = {
        "host": parts.hostname or "127.0.0.1",
        "port": port or _DEFAULT_PORT,
        "charset": "utf8mb4",
    }
    if parts.username:
        kwargs["user"] = unquote(parts.username)
    if parts.password:
        kwargs["password"] = unquote(parts.password)
    database = unquote(parts.path.lstrip("/"))
    if database:
        kwargs["database"] = database
    kwargs.update(_query_options(parts.query))
    return kwargs


def _query_options(query: str) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for key, values in parse_qs(query, keep_blank_values=True).items():
        value = values[-1]
        if key in _INT_OPTIONS:
            if not (value.isascii() and value.isdigit()):
                raise ValueError(f"mysql DSN option {key!r} is not a whole number")
            options[key] = int(value)
        elif key in _STR_OPTIONS:
            options[key] = value
        else:
            raise ValueError(f"unsupported mysql DSN option {key!r}")
    return options
