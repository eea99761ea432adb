"""Every SQL statement the Oracle backend can issue parses as Oracle and passes the 11g lint.

The statements are collected, not listed: ``sql.REGISTRY`` (what the code executes; a
source scan below proves no call site bypasses it) plus every step and undo of the
migrations, as the runner sends them (``_steps``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from types import ModuleType

import pytest
import sqlglot
from sqlglot import exp

import flightstate_oracle
from flightstate_oracle import _sql as sql
from flightstate_oracle._lint import identifier_problem, lint
from flightstate_oracle._schema import TABLES
from flightstate_oracle._steps import load_migrations

PACKAGE = Path(flightstate_oracle.__file__).parent
#: Statements sqlglot's Oracle dialect can only keep as an opaque Command (still parsed).
COMMANDS = {"session_setup", "kill_session"}


def migration_statements() -> list[tuple[str, str]]:
    out = []
    for migration in load_migrations():
        for step in migration.steps:
            out += [(f"{migration.id}.sql#{step.number}", step.apply)] if step.apply else []
            out += [(f"{migration.id}.rollback#{step.number}", step.undo)] if step.undo else []
    return out


#: The namespaces call sites take statements from (``sql.X``: ``_sql``, whose modules register
#: them); every module of the ``_sql`` package must be imported by it.
STATEMENT_MODULES = {"sql": sql}
ALL = [(name, s.text) for name, s in sql.REGISTRY.items()] + migration_statements()


def test_collected_something() -> None:
    names = {name.split("#")[0] for name, _ in ALL}
    assert {
        "0001_core.sql", "0001_core.rollback", "flight_merge",
        "0002_history_display.sql", "0003_lifecycle_requests.sql",
        "0003_lifecycle_requests.rollback", "proc_ids", "proc_duplicates",
        "cleanup_dated", "archive.FLIGHT_SCHD", "response_log", "republish_insert",
    } <= names  # fmt: skip
    assert len(ALL) > 150


def test_every_statement_module_is_collected() -> None:
    on_disk = {path.stem for path in (PACKAGE / "_sql").glob("*.py")} - {"__init__"}
    imported = {name for name, value in vars(sql).items() if isinstance(value, ModuleType)}
    assert on_disk == imported


@pytest.mark.parametrize(("name", "text"), ALL, ids=[name for name, _ in ALL])
def test_parses_as_oracle(name: str, text: str) -> None:
    parsed = sqlglot.parse(text, read="oracle")
    assert len(parsed) == 1
    assert parsed[0] is not None
    if name in COMMANDS:
        return
    if isinstance(parsed[0], exp.Command) and name.startswith("savepoint_"):
        # sqlglot's Oracle dialect parsed `SAVEPOINT x` as a statement up to 30.30 and keeps
        # it as an opaque Command from 30.31 on; both are fine, provided the Command is exactly
        # the SAVEPOINT keyword and one valid 11g identifier (checked here instead).
        assert savepoint_problem(parsed[0], text) is None
        return
    assert not isinstance(parsed[0], exp.Command), f"{name} fell back to a Command"


def savepoint_problem(parsed: exp.Expression | None, text: str) -> str | None:
    """Why *parsed* is not a ``SAVEPOINT <identifier>`` Command 11g accepts, or None."""
    if not isinstance(parsed, exp.Command) or str(parsed.this).upper() != "SAVEPOINT":
        return f"{text!r} is not a SAVEPOINT command"
    words = text.split()
    if len(words) != 2 or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_$#]*", words[1]):
        return f"{text!r} does not name exactly one unquoted identifier"
    if parsed.expression is None or parsed.expression.name != words[1]:
        return f"{text!r}: sqlglot kept another name"
    return identifier_problem(words[1])


@pytest.mark.parametrize(
    "bad",
    ["SAVEPOINT", "SAVEPOINT A B", "SAVEPOINT 1X", "SAVEPOINT " + "S" * 31, "SAVEPOINT SELECT"],
)
def test_savepoint_check_rejects_malformed(bad: str) -> None:
    # Built by hand, as 30.31+ would parse it, so the check is tested on every sqlglot version.
    name = bad.partition(" ")[2]
    command = exp.Command(this="SAVEPOINT", expression=exp.Literal.string(name))
    assert savepoint_problem(command, bad) is not None


def test_savepoint_check_rejects_other_statements() -> None:
    assert savepoint_problem(exp.Command(this="COMMIT"), "COMMIT") is not None
    assert savepoint_problem(exp.Rollback(), "ROLLBACK") is not None


@pytest.mark.parametrize(("name", "text"), ALL, ids=[name for name, _ in ALL])
def test_passes_11g_lint(name: str, text: str) -> None:
    assert lint(text) == [], name


def _sql_attribute(node: ast.expr) -> bool:
    """``sql.X``, ``sql.X[...]`` or ``sql.x(...)``: a registered statement (or one made by
    a function of the registry from integers, ``sql.kill_session``)."""
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Call):
        node = node.func
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in STATEMENT_MODULES
    )


def _step_statement(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Statement"


def test_every_call_site_uses_the_registry() -> None:
    runners = {"run", "run_many", "merge_many", "query"}
    seen = 0
    for path in PACKAGE.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in {"execute", "executemany"}:
                # only _db.py (on a Statement's text) and session.py (SESSION_SETUP) execute
                assert path.name in {"_db.py", "session.py"}, f"{path.name}:{node.lineno}"
                arg = node.args[0]
                assert isinstance(arg, ast.Attribute), path.name
                assert arg.attr == "text", path.name
            elif name in runners and path.name == "migrate.py" and _step_statement(node.args[1]):
                continue  # a migration step's text (collected above from the files)
            elif name in runners and path.name != "_db.py":
                assert _sql_attribute(node.args[1]), f"{path.name}:{node.lineno}"
                seen += 1
    assert seen >= 20


def _migration_tables() -> dict[str, dict[str, str]]:
    tables: dict[str, dict[str, str]] = {}
    for name, text in migration_statements():
        tree = sqlglot.parse_one(text, read="oracle")
        if isinstance(tree, exp.Create) and tree.kind == "TABLE":
            schema = tree.this
            assert isinstance(schema, exp.Schema)
            columns = {
                col.name: col.args["kind"].sql(dialect="oracle")
                for col in schema.expressions
                if isinstance(col, exp.ColumnDef)
            }
            tables[schema.this.name] = columns
        elif isinstance(tree, exp.Alter) and tree.kind == "TABLE" and "rollback" not in name:
            # ALTER TABLE .. ADD (columns): a later migration's additive columns
            for col in tree.find_all(exp.ColumnDef):
                tables[tree.this.name][col.name] = col.args["kind"].sql(dialect="oracle")
    return tables


def test_migration_declares_exactly_the_type_mapping() -> None:
    declared = _migration_tables()
    expected = {
        table.name: {
            c.name: sqlglot.parse_one(f"CAST(NULL AS {c.type_sql})", read="oracle")
            .args["to"]
            .sql(dialect="oracle")
            for c in table.columns
        }
        for table in TABLES.values()
    }
    assert declared == expected


def test_every_schema_name_is_a_valid_11g_identifier() -> None:
    names = {t.name for t in TABLES.values()} | {c.name for t in TABLES.values() for c in t.columns}
    for _, text in migration_statements():
        for ident in sqlglot.parse_one(text, read="oracle").find_all(exp.Identifier):
            names.add(ident.name)
    problems = {name: identifier_problem(name) for name in names if identifier_problem(name)}
    assert problems == {}


def test_bind_types_are_explicit_for_time_and_lobs() -> None:
    merge = sql.FLIGHT_MERGE
    assert merge.binds["SODT_TS"].value == "TSTZ"
    assert merge.binds["SRVT"].value == "CLOB"
    assert "FROM_TZ(:SODT_TS, '+00:00')" in merge.text
    assert sql.PROC_INSERT.binds["SUBSYSTEM_DATE_SENT"].value == "TIMESTAMP"
    assert sql.EVENT_INSERT.binds["PAYLOAD"].value == "CLOB"
