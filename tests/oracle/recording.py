"""A recording stand-in for python-oracledb's connection, cursor and pool: a check of the
driver boundary, not an integration test (no Oracle server can run here).

It records every statement text and bind exactly as the driver would receive them, refuses
what the driver or the server would refuse before running anything (a trailing ``;``:
ORA-00911; a bind the text does not name, or a named bind not supplied: ORA-01036 /
DPY-4008; an input size for a bind the text does not name), and answers only what the code
path needs: data-dictionary look-ups and DDL from a tiny model of the schema's objects
(``Schema``), which raises what Oracle raises for an object that exists or does not
(ORA-00955, ORA-01430, ORA-02264, ORA-00942, ORA-01418, ORA-02289, ORA-02443, ORA-00904);
registered queries from ``answers`` (by registry name); anything else returns no rows.
``fail_after`` stops the "process" after that many schema-changing statements (the next one
raises ORA-03113 before it runs): a half-applied migration, as a crash leaves it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import oracledb
import sqlglot
from attrs import define, field, frozen
from oracledb import errors as ora_errors
from sqlglot import exp
from sqlglot.dialects.oracle import Oracle
from sqlglot.tokens import TokenType  # type: ignore[attr-defined]

from flightstate_oracle import _sql as sql
from flightstate_oracle._steps import ObjectKind, StepFormatError, check_for
from flightstate_oracle.session import parse_oracle_url, pool_options

__all__ = ["Call", "Recorder", "Schema", "bind_names", "oracle_error"]

Answer = Callable[[Mapping[str, Any]], tuple[list[str], list[tuple[Any, ...]]]]
BY_TEXT = {statement.text: name for name, statement in sql.REGISTRY.items()}
_CHANGES = re.compile(r"^\s*(CREATE|DROP|ALTER\s+TABLE|INSERT|UPDATE|DELETE|MERGE)\b", re.I)


def oracle_error(message: str, cls: type[oracledb.Error] = oracledb.DatabaseError) -> Exception:
    """A real python-oracledb exception object, as the driver builds it."""
    return cls(ora_errors._Error(message))


def bind_names(text: str) -> set[str]:
    """The ``:NAME`` binds of a statement (never inside string literals), upper-case."""
    tokens = Oracle().tokenize(text)
    return {
        tokens[i + 1].text.upper()
        for i, token in enumerate(tokens[:-1])
        if token.token_type is TokenType.COLON and tokens[i + 1].token_type is TokenType.VAR
    }


@frozen
class Call:
    """One statement as the driver received it."""

    text: str
    binds: tuple[Mapping[str, Any], ...]
    input_sizes: tuple[str, ...]
    session: int


@define
class Schema:
    """The objects of one schema (names upper-case unless created quoted) and a few rows."""

    tables: dict[str, set[str]] = field(factory=dict)
    indexes: dict[str, str] = field(factory=dict)
    sequences: set[str] = field(factory=set)
    views: set[str] = field(factory=set)
    constraints: dict[str, str] = field(factory=dict)
    recorded: set[str] = field(factory=set)  # SCHEMA_MIGRATION rows
    yoyo_ids: list[str] = field(factory=list)  # "_yoyo_migration" rows

    def objects(self) -> tuple[Any, ...]:
        """Everything but the runner's rows, for comparing two schemas."""
        tables = {name: frozenset(columns) for name, columns in self.tables.items()}
        return (tables, dict(self.indexes), set(self.sequences), set(self.views),
                dict(self.constraints))  # fmt: skip

    def apply(self, text: str) -> None:
        """Run one DDL statement on the model, raising what Oracle raises."""
        try:
            check = check_for(text)
        except StepFormatError:
            return  # not a DDL kind the runner uses (e.g. ALTER SESSION)
        if check.kind is ObjectKind.DATA:
            return
        (self._create if check.present else self._drop)(check.kind, check.name, text)

    def _create(self, kind: ObjectKind, name: str, text: str) -> None:
        if kind is ObjectKind.COLUMN:
            table, column = name.split(".")
            if column in self._table(table):
                _raise("ORA-01430: column being added already exists in table")
            self._table(table).add(column)
            return
        if kind is ObjectKind.CONSTRAINT:
            if name in self.constraints:
                _raise("ORA-02264: name already used by an existing constraint")
            table = re.match(r"ALTER\s+TABLE\s+(\w+)", text, re.I)
            assert table is not None
            self._table(table.group(1).upper())
            self.constraints[name] = table.group(1).upper()
            return
        if kind is ObjectKind.INDEX:
            if name in self.indexes:
                _raise("ORA-00955: name is already used by an existing object")
            on = re.search(r"\bON\s+(\w+)", text, re.I)
            assert on is not None
            self._table(on.group(1).upper())
            self.indexes[name] = on.group(1).upper()
            return
        if name in self.tables or name in self.views or name in self.sequences:
            _raise("ORA-00955: name is already used by an existing object")
        if kind is ObjectKind.TABLE:
            tree = sqlglot.parse_one(text, read="oracle")
            self.tables[name] = {c.name.upper() for c in tree.find_all(exp.ColumnDef)}
            for constraint in tree.find_all(exp.Constraint):
                self.constraints[constraint.name.upper()] = name
        elif kind is ObjectKind.SEQUENCE:
            self.sequences.add(name)
        else:
            self.views.add(name)

    def _drop(self, kind: ObjectKind, name: str, text: str) -> None:
        del text
        if kind is ObjectKind.COLUMN:
            table, column = name.split(".")
            if column not in self._table(table):
                _raise("ORA-00904: invalid identifier")
            self._table(table).discard(column)
        elif kind is ObjectKind.CONSTRAINT:
            if self.constraints.pop(name, None) is None:
                _raise("ORA-02443: Cannot drop constraint - nonexistent constraint")
        elif kind is ObjectKind.INDEX:
            if self.indexes.pop(name, None) is None:
                _raise("ORA-01418: specified index does not exist")
        elif kind is ObjectKind.SEQUENCE:
            if name not in self.sequences:
                _raise("ORA-02289: sequence does not exist")
            self.sequences.discard(name)
        elif kind is ObjectKind.VIEW:
            if name not in self.views:
                _raise("ORA-00942: table or view does not exist")
            self.views.discard(name)
        else:
            self._table(name)
            del self.tables[name]
            self.indexes = {i: t for i, t in self.indexes.items() if t != name}
            self.constraints = {c: t for c, t in self.constraints.items() if t != name}

    def _table(self, name: str) -> set[str]:
        if name not in self.tables:
            _raise("ORA-00942: table or view does not exist")
        return self.tables[name]

    def exists(self, view: str, binds: Mapping[str, Any]) -> bool:
        """The answer of a ``sql.DICTIONARY_LOOKUP`` query."""
        if view == "USER_TAB_COLUMNS":
            return str(binds["COLUMN_NAME"]) in self.tables.get(str(binds["TABLE_NAME"]), set())
        name = str(binds["NAME"])
        pool = {"USER_TABLES": self.tables, "USER_INDEXES": self.indexes,
                "USER_SEQUENCES": self.sequences, "USER_VIEWS": self.views,
                "USER_CONSTRAINTS": self.constraints}[view]  # fmt: skip
        return name in pool


def _raise(message: str) -> None:
    raise oracle_error(message)


_LOOKUP_VIEW = {statement.name: view for view, statement in sql.DICTIONARY_LOOKUP.items()}


@define
class Recorder:
    """The stand-in driver: one schema model, every call recorded, sessions numbered."""

    schema: Schema = field(factory=Schema)
    charset: str = "AL32UTF8"
    answers: dict[str, Answer] = field(factory=dict)
    fail_after: int | None = None
    #: text prefix -> the ORA- message the server answers it with (e.g. ORA-01031)
    refusals: dict[str, str] = field(factory=dict)
    calls: list[Call] = field(factory=list)
    sessions: list[RecordingConnection] = field(factory=list)
    changes: int = 0

    def connect(self) -> RecordingConnection:
        """A new session (what ``oracledb.connect`` would return)."""
        connection = RecordingConnection(self, len(self.sessions) + 1)
        self.sessions.append(connection)
        return connection

    def texts(self) -> list[str]:
        return [call.text for call in self.calls]

    def names(self) -> list[str | None]:
        """The registry name of each recorded call (None: not a registered statement)."""
        return [BY_TEXT.get(call.text) for call in self.calls]

    def execute(
        self, session: int, text: str, rows: list[Mapping[str, Any]], sizes: tuple[str, ...]
    ) -> tuple[list[str], list[tuple[Any, ...]], int]:
        self.calls.append(Call(text, tuple(dict(r) for r in rows), sizes, session))
        if text.rstrip().endswith(";"):
            _raise("ORA-00911: invalid character")
        named = bind_names(text)
        for binds in rows:
            if {k.upper() for k in binds} != named:
                _raise(f"ORA-01036: illegal variable name/number: {sorted(binds)}, {sorted(named)}")
        if not set(sizes) <= named:
            _raise(f"ORA-01036: input sizes {sorted(set(sizes) - named)} not in the text")
        for prefix, message in self.refusals.items():
            if text.startswith(prefix):
                _raise(message)
        if _CHANGES.match(text):
            if self.fail_after is not None and self.changes >= self.fail_after:
                raise oracle_error("ORA-03113: end-of-file on communication channel",
                                   oracledb.OperationalError)  # fmt: skip
            self.changes += 1
        return self._answer(text, rows[0] if rows else {})

    def _answer(  # noqa: PLR0911 - one answer per statement kind the runner reads
        self, text: str, binds: Mapping[str, Any]
    ) -> tuple[list[str], list[tuple[Any, ...]], int]:
        name = BY_TEXT.get(text)
        if name in self.answers:
            columns, found = self.answers[name](binds)
            return columns, found, len(found)
        if name in _LOOKUP_VIEW:
            return ["N"], [(int(self.schema.exists(_LOOKUP_VIEW[name], binds)),)], 1
        if name == "database_charset":
            return ["VALUE"], [(self.charset,)], 1
        if name == "migration_record":
            new = str(binds["NAME"]) not in self.schema.recorded
            self.schema.recorded.add(str(binds["NAME"]))
            return [], [], int(new)
        if name == "migration_unrecord":
            self.schema.recorded.discard(str(binds["NAME"]))
            return [], [], 1
        if name == "migration_lock":
            return ["MIGRATION_NAME"], [(binds["NAME"],)], 1
        if name == "migrations_recorded":
            rows = sorted(r for r in self.schema.recorded if r != binds["LOCK_ROW"])
            return ["MIGRATION_NAME"], [(r,) for r in rows], len(rows)
        if name == "yoyo_records":
            ids = self.schema.yoyo_ids
            return ["YOYO_ID"], [(r,) for r in ids], len(ids)
        if name == "health_probe":
            return ["ANSWER"], [(1,)], 1
        self.schema.apply(text)
        return [], [], 0


class RecordingCursor:
    """``oracledb.Cursor`` as far as flightstate uses it."""

    def __init__(self, connection: RecordingConnection) -> None:
        self.connection = connection
        self.outputtypehandler: Any = None
        self.arraysize = 100
        self.rowcount = 0
        self.description: list[tuple[str]] | None = None
        self._rows: list[tuple[Any, ...]] = []
        self._sizes: tuple[str, ...] = ()

    def __enter__(self) -> RecordingCursor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._rows = []

    def setinputsizes(self, **sizes: Any) -> None:
        self._sizes = tuple(name.upper() for name in sizes)

    def execute(self, text: str, params: Mapping[str, Any] | None = None) -> None:
        self._run(text, [dict(params or {})])

    def executemany(self, text: str, rows: list[Mapping[str, Any]]) -> None:
        self._run(text, [dict(row) for row in rows])

    def _run(self, text: str, rows: list[Mapping[str, Any]]) -> None:
        recorder = self.connection.recorder
        columns, found, count = recorder.execute(self.connection.number, text, rows, self._sizes)
        self.description = [(c,) for c in columns] if columns else None
        self._rows, self.rowcount = list(found), count

    def fetchall(self) -> list[tuple[Any, ...]]:
        rows, self._rows = self._rows, []
        return rows

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._rows.pop(0) if self._rows else None


class RecordingConnection:
    """``oracledb.Connection`` as far as flightstate uses it (one numbered session)."""

    version = "11.2.0.4.0"

    def __init__(self, recorder: Recorder, number: int) -> None:
        self.recorder = recorder
        self.number = number
        self.module: str | None = None
        self.client_identifier: str | None = None
        self.call_timeout = 0
        self.commits = 0
        self.closed = False

    def cursor(self) -> RecordingCursor:
        if self.closed:
            _raise("DPY-1001: not connected to database")
        return RecordingCursor(self)

    def commit(self) -> None:
        self.commits += 1

    def rollback(self) -> None:
        """Nothing to undo in the model: only DDL and the runner's rows are kept."""

    def close(self) -> None:
        self.closed = True

    def __enter__(self) -> RecordingConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        """A pooled connection goes back to the pool."""


class RecordingPool(oracledb.ConnectionPool):
    """``oracledb.ConnectionPool`` (a subclass, so ``OracleStore`` takes it as a lent pool):
    every ``acquire`` a new session of the recorder, set up by the session callback that
    ``session.pool_options`` gives the driver's pool (which is never created)."""

    def __init__(self, recorder: Recorder, url: str = "oracle://fs:secret@db:1521/AODB") -> None:
        self.recorder = recorder  # no super().__init__: no driver pool
        self._setup = pool_options(parse_oracle_url(url))["session_callback"]

    @contextmanager  # type: ignore[override]
    def acquire(self) -> Iterator[RecordingConnection]:
        connection = self.recorder.connect()
        self._setup(connection, None)
        yield connection

    def close(self, force: bool = False) -> None:
        del force

    def __del__(self) -> None:
        """No driver pool to release."""
