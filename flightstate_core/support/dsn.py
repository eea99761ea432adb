"""Credentials in connection URLs: one rule for parsing and redacting (pure, no driver).

Why one module: a DSN parser and a redactor that split ``scheme://user:password@host`` at
different ``@`` signs leak the rest of the password (``mysql://adv:Pw@Tail@host`` was parsed
at the last ``@`` and redacted at the first, printing ``Tail``). So:

- ``redact`` hides everything between ``scheme://user:`` and the **last** ``@`` of the text,
  whatever lies between (a ``/``, ``?``, ``#``, space or ``@`` of a password included). It
  may hide more than the password (an ``@`` later in an error message), never less.
- ``check_url_credentials`` makes the parsers agree with that split or refuse the DSN: the
  user and password (the text before that last ``@``) must not hold a raw ``/``, ``?``,
  ``#`` or white space (a URL parser would end the host part there), nor, for libpq
  (``raw_at=False``, it splits at the first ``@``), a raw ``@``. Percent-encode them.
  Its messages never contain the DSN.
- ``key=value`` DSNs (libpq): ``password=...`` is hidden, quoted or not.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["check_url_credentials", "redact"]

_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_PASSWORD_PARAM: Final = re.compile(r"(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'?|\S+)")
_ENDS_HOST: Final = frozenset("/?#")
_HIDDEN: Final = "***"
_FIRST_PRINTABLE: Final = 0x20


def _userinfo(text: str, start: int) -> tuple[int, str] | None:
    """(index of the last ``@``, the text from *start* to it), or None without an ``@``."""
    at = text.rfind("@")
    return None if at < start else (at, text[start:at])


def _redact_url(text: str) -> str:
    found = _SCHEME.search(text)
    if found is None:
        return text
    split = _userinfo(text, found.end())
    if split is None:
        return text
    at, userinfo = split
    user, colon, _ = userinfo.partition(":")
    if any(c in _ENDS_HOST or c == "@" or c.isspace() for c in user):
        user = _HIDDEN  # not a plain user name: part of a password, or of something else
    return text[: found.end()] + user + (":" + _HIDDEN if colon else "") + text[at:]


def redact(text: str | None) -> str | None:
    """*text* (a DSN, or a message that may quote one) with every password hidden."""
    if text is None:
        return None
    return _PASSWORD_PARAM.sub(r"\1" + _HIDDEN, _redact_url(text))


def check_url_credentials(dsn: str, *, raw_at: bool) -> None:
    """``ValueError`` unless a URL DSN's user and password split where ``redact`` splits
    them (see the module docstring). A DSN that is not a URL passes unchecked."""
    found = _SCHEME.match(dsn)
    if found is None:
        return
    split = _userinfo(dsn, found.end())
    if split is None:
        return
    userinfo = split[1]
    if any(c in _ENDS_HOST or c.isspace() or ord(c) < _FIRST_PRINTABLE for c in userinfo):
        raise ValueError(
            "the user or password holds a raw '/', '?', '#' or space, or an '@' follows "
            "the host: percent-encode it (%2F, %3F, %23, %20, %40)"
        )
    if not raw_at and "@" in userinfo:
        raise ValueError("the user or password holds a raw '@': percent-encode it as %40")
