"""The one choke point where python-oracledb exceptions become core errors.

Why: the pump decides retry versus DEAD from core types only. Every public entry point of
this package runs its driver calls under :func:`translated`; nothing else catches
``oracledb.Error`` (the MERGE retry only *inspects* an error with ``is_unique_violation``
before re-raising it into this block).

Classification (rules as data, by the error's full code ``ORA-nnnnn`` / ``DPI-nnnn`` /
``DPY-nnnn``):

1. a code in ``TRANSIENT_CODES`` (connection lost, instance down, deadlock, lock wait
   timeout, snapshot too old, space exhausted until an operator acts) -> ``TransientError``;
2. a code in ``PERMANENT_CODES`` (constraint, value too large, missing table, bad SQL)
   -> ``PermanentError``;
3. otherwise ``isrecoverable`` (OCI says a retry may work) -> ``TransientError``;
4. otherwise by DB-API class: ``OperationalError``/``InterfaceError``/``InternalError`` ->
   ``TransientError``; ``IntegrityError``/``DataError``/``ProgrammingError``/
   ``NotSupportedError`` and anything else -> ``PermanentError``.

ORA-00001 is permanent here: a MERGE race is retried before it gets this far
(``is_unique_violation``), and PROC_STATE is a plain INSERT so a replayed message id is
refused for good (docs/design.md, "One message, one transaction").
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

import oracledb

from flightstate_core.domain.errors import (
    FlightstateError,
    PermanentError,
    TransientError,
    prefixed,
)

__all__ = [
    "PERMANENT_CODES",
    "STORE_WIDE_CODES",
    "TRANSIENT_CODES",
    "classify",
    "is_unique_violation",
    "translated",
]

TRANSIENT_CODES: Final = frozenset({
    "ORA-00018", "ORA-00020", "ORA-00028", "ORA-00051", "ORA-00054", "ORA-00060",
    "ORA-00257", "ORA-01012", "ORA-01013", "ORA-01033", "ORA-01034", "ORA-01089",
    "ORA-01090", "ORA-01092", "ORA-01555", "ORA-01652", "ORA-01653", "ORA-01654",
    "ORA-01688", "ORA-02396", "ORA-03113", "ORA-03114", "ORA-03135", "ORA-03136",
    "ORA-04068", "ORA-04061", "ORA-08177", "ORA-12153", "ORA-12170", "ORA-12514",
    "ORA-12516", "ORA-12518", "ORA-12519", "ORA-12520", "ORA-12521", "ORA-12526",
    "ORA-12527", "ORA-12528", "ORA-12537", "ORA-12541", "ORA-12543", "ORA-12545",
    "ORA-12547", "ORA-12571", "ORA-16000", "ORA-25408", "ORA-30006", "ORA-30036",
    "DPI-1010", "DPI-1067", "DPI-1080", "DPY-1001", "DPY-4011", "DPY-6005",
})  # fmt: skip
PERMANENT_CODES: Final = frozenset({
    "ORA-00001", "ORA-00904", "ORA-00911", "ORA-00933", "ORA-00942", "ORA-01400",
    "ORA-01401", "ORA-01438", "ORA-01461", "ORA-01722", "ORA-01745", "ORA-02290",
    "ORA-02291", "ORA-02292", "ORA-12899", "DPI-1047", "DPY-3010",
})  # fmt: skip

#: Transient codes of the store or the session, never of one statement (the session lost
#: or never opened: instance down or starting, session killed, end-of-file on the channel,
#: listener refused; a read-only standby): the pump's retry budget does not count them.
STORE_WIDE_CODES: Final = frozenset({
    "ORA-16000", "ORA-00028", "ORA-01012", "ORA-01033", "ORA-01034", "ORA-01089", "ORA-01090",
    "ORA-01092", "ORA-02396", "ORA-03113", "ORA-03114", "ORA-03135", "ORA-12153",
    "ORA-12170", "ORA-12514", "ORA-12516", "ORA-12518", "ORA-12519", "ORA-12520",
    "ORA-12521", "ORA-12526", "ORA-12527", "ORA-12528", "ORA-12537", "ORA-12541",
    "ORA-12543", "ORA-12545", "ORA-12547", "ORA-12571", "DPI-1010", "DPI-1067",
    "DPI-1080", "DPY-1001", "DPY-4011", "DPY-6005",
})  # fmt: skip

_TRANSIENT_CLASSES: Final = (
    oracledb.OperationalError,
    oracledb.InterfaceError,
    oracledb.InternalError,
)


def _full_code(exc: oracledb.Error) -> str:
    error = exc.args[0] if exc.args else None
    return str(getattr(error, "full_code", "") or "")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def is_unique_violation(exc: BaseException) -> bool:
    """True for ORA-00001 (a concurrent MERGE inserted the same key first)."""
    return isinstance(exc, oracledb.Error) and _full_code(exc) == "ORA-00001"


def classify(exc: oracledb.Error) -> FlightstateError:
    """The core error for one driver exception (not raised; the caller chains it)."""
    code = _full_code(exc)
    message = f"Oracle {code or type(exc).__name__}: {_first_line(exc)}"
    transient = TransientError(message, code=code or None,
                               store_wide=not code or code in STORE_WIDE_CODES)  # fmt: skip
    if code in TRANSIENT_CODES:
        return transient
    if code in PERMANENT_CODES:
        return PermanentError(message)
    if getattr(exc.args[0] if exc.args else None, "isrecoverable", False):
        return transient
    if isinstance(exc, _TRANSIENT_CLASSES):
        return transient
    return PermanentError(message)


@contextmanager
def translated(what: str = "") -> Iterator[None]:
    """Run a block; any ``oracledb.Error`` leaves it as a core error (``raise ... from``),
    its message prefixed with *what* was being done when given (as PostgreSQL's twin)."""
    try:
        yield
    except oracledb.Error as exc:
        error = classify(exc)
        raise prefixed(error, what) from exc

