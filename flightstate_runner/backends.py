"""Which store package serves a store DSN: chosen by its scheme, imported only then.

Why by scheme: the runner is one program for every store (README, "Configuration"); it
imports a backend module when a DSN names it, so a PostgreSQL deployment never loads the
Oracle driver and the runner itself names no driver (pyproject's import contract).
A libpq key=value conninfo (``host=... dbname=...``) has no scheme: it is PostgreSQL, as
``FLIGHTSTATE_PG_DSN`` always accepted it.
"""

from __future__ import annotations

import importlib
import re
from types import ModuleType
from typing import Final

from flightstate_core.domain.errors import ConfigError
from flightstate_core.ports import BackendOpener, BackendSettings, StoreBackend

__all__ = ["MODULES", "check_dsn", "module_for", "open_backend", "scheme_of"]

#: Scheme -> the module offering ``open_backend(dsn, settings)`` and ``check_dsn(dsn)``.
MODULES: Final = {
    "postgresql": "flightstate_pg.backend",
    "postgres": "flightstate_pg.backend",
    "oracle": "flightstate_oracle.backend",
    "memory": "flightstate_core.memory.backend",
}
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")


def scheme_of(dsn: str) -> str:
    """The DSN's scheme in lower case; ``postgresql`` for a key=value conninfo."""
    found = _SCHEME.match(dsn)
    return found[1].lower() if found else "postgresql"


def module_for(dsn: str, setting: str) -> ModuleType:
    """The backend module of *dsn*; ``ConfigError`` naming *setting* for another scheme,
    or when the store's extra (its driver) is not installed."""
    scheme = scheme_of(dsn)
    name = MODULES.get(scheme)
    if name is None:
        raise ConfigError(f"{setting}: scheme {scheme}:// is not one of postgresql://, "
                          "oracle://, memory://")  # fmt: skip
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ConfigError(f"{setting}: the {scheme} store is not installed "
                          f"({exc.name or exc}); install its extra") from None  # fmt: skip


def check_dsn(dsn: str, setting: str) -> None:
    """Parse *dsn* without connecting; ``ConfigError`` naming *setting* (never quoting the
    DSN, which may hold a password)."""
    try:
        module_for(dsn, setting).check_dsn(dsn)
    except ValueError as exc:
        raise ConfigError(f"{setting}: {exc}") from None


def open_backend(dsn: str, settings: BackendSettings, setting: str = "store_dsn") -> StoreBackend:
    """The backend of *dsn*'s scheme (``<store package>.backend.open_backend``)."""
    opener: BackendOpener = module_for(dsn, setting).open_backend
    return opener(dsn, settings)
