"""Binary COPY for the write path's bulk rows.

Why binary: text COPY renders every value as text on the client, and the server parses it
back (a 90-column FLIGHT_SCHD row with its typed twins took 13 us to format; binary, 3 us,
measured with psycopg's own formatter). The pump formats one main row, two event rows and
a PROC_STATE row per message, so this is a few percent of a message's cost.

Binary COPY needs the exact type of every column. They are read once per process from the
catalog (``pg_attribute``), not restated here: the migrations stay the only description of
the schema, and a released column never changes type (docs/design.md, "Migrations").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

import psycopg
from attrs import frozen

__all__ = ["CopyTarget", "copy_rows"]

_TYPES: Final = (
    "SELECT upper(attname), atttypid FROM pg_attribute "
    "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped"
)
# table -> column -> type oid (built-in types: the same oids in every database). Threads may
# race to fill an entry; they store equal values, and a dict assignment is atomic.
_known: dict[str, dict[str, int]] = {}


@frozen
class CopyTarget:
    """Rows into ``table (columns)``; ``types_of``: the table whose catalog entry gives the
    column types (a temp stage table is created LIKE a real one)."""

    table: str
    columns: tuple[str, ...]
    types_of: str

    @property
    def statement(self) -> str:
        """The COPY statement (identifiers from layout constants only)."""
        return f"COPY {self.table} ({', '.join(self.columns)}) FROM STDIN (FORMAT BINARY)"


def _column_types(conn: psycopg.Connection[Any], target: CopyTarget) -> list[int]:
    found = _known.get(target.types_of)
    if found is None:
        rows = conn.execute(_TYPES, (target.types_of.lower(),)).fetchall()
        found = _known[target.types_of] = {str(name): int(oid) for name, oid in rows}
    return [found[column] for column in target.columns]


def copy_rows(
    cursor: psycopg.Cursor[Any], target: CopyTarget, rows: Iterable[Sequence[Any]]
) -> None:
    """COPY *rows* (an iterable: built while the server inserts the previous ones)."""
    types = _column_types(cursor.connection, target)
    with cursor.copy(target.statement) as copy:
        copy.set_types(types)
        for row in rows:
            copy.write_row(row)
