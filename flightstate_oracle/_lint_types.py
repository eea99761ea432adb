"""11g lint rules that need column types: LOBs where Oracle cannot compare or sort them,
TIMESTAMP WITH TIME ZONE in a key, and GROUP BY on a select-list alias (``_lint`` runs them).

Why a parse tree here: these rules ask what a column *is* (from the catalog: the backend's
tables, ``_schema.TABLES``, plus any table the statement itself creates) and where it sits
(a comparison, ORDER BY, DISTINCT, a key), which sqlglot's Oracle parse tree answers. A
statement sqlglot cannot parse gets no finding here (the token rules still run, and
tests/oracle/test_statements.py requires every statement to parse).

- ``O11-LOB-USE``: a CLOB/NCLOB/BLOB column compared (``=``, ``<>``, ``<``, ``IN``, ..), in
  ORDER BY / GROUP BY, in a SELECT DISTINCT list (ORA-00932), or in a primary/unique key or
  an index (ORA-02327, ORA-02329). ``DBMS_LOB.INSTR(col, :x) > 0`` and ``col IS NULL`` are
  fine.
- ``O11-TSTZ-KEY``: a TIMESTAMP WITH TIME ZONE column in a primary or unique key (ORA-02329;
  a plain index on one is allowed).
- ``O11-GROUP-ALIAS``: GROUP BY naming a select-list alias (11g resolves GROUP BY against the
  tables only: ORA-00904).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from typing import Final

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from flightstate_oracle._schema import TABLES

__all__ = ["TYPE_RULES", "Catalog", "backend_catalog", "type_findings"]

#: table -> column -> "LOB" / "TSTZ" / "" (upper-case names)
Catalog = Mapping[str, Mapping[str, str]]

TYPE_RULES: Final = {
    "O11-LOB-USE": "a LOB compared, sorted, grouped, made DISTINCT or used in a key/index",
    "O11-TSTZ-KEY": "TIMESTAMP WITH TIME ZONE in a primary or unique key (ORA-02329)",
    "O11-GROUP-ALIAS": "GROUP BY on a select-list alias (11g: ORA-00904)",
}
_COMPARISONS: Final = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.In, exp.Between)


def _kind(type_sql: str) -> str:
    text = type_sql.upper()
    if text.startswith(("CLOB", "NCLOB", "BLOB")) or text in ("TEXT", "BLOB", "NCLOB"):
        return "LOB"
    return "TSTZ" if "WITH TIME ZONE" in text and "LOCAL" not in text else ""


@cache
def backend_catalog() -> Catalog:
    """The column kinds of every table of the backend (``_schema.TABLES``)."""
    return {t.name: {c.name: _kind(c.type_sql) for c in t.columns} for t in TABLES.values()}


def _created(tree: exp.Expr) -> dict[str, dict[str, str]]:
    if not (isinstance(tree, exp.Create) and isinstance(tree.this, exp.Schema)):
        return {}
    columns = {c.name.upper(): _kind(c.args["kind"].sql(dialect="oracle"))
               for c in tree.this.expressions if isinstance(c, exp.ColumnDef)}  # fmt: skip
    return {tree.this.this.name.upper(): columns}


def _kinds_in_scope(tree: exp.Expr, catalog: Catalog) -> dict[str, str]:
    """Column name -> kind over the tables the statement names; a name whose kind differs
    between them is left out (no guess)."""
    kinds: dict[str, set[str]] = {}
    for table in tree.find_all(exp.Table):
        for column, kind in catalog.get(table.name.upper(), {}).items():
            kinds.setdefault(column, set()).add(kind)
    for columns in _created(tree).values():
        for column, kind in columns.items():
            kinds.setdefault(column, set()).add(kind)
    return {name: next(iter(k)) for name, k in kinds.items() if len(k) == 1}


def _column(node: exp.Expr | None) -> str:
    kinds = exp.Column | exp.Identifier | exp.ColumnDef
    return node.name.upper() if isinstance(node, kinds) else ""


def _lob_uses(tree: exp.Expr, kinds: Mapping[str, str]) -> Iterator[str]:
    def lob(node: exp.Expr | None) -> bool:
        return kinds.get(_column(node)) == "LOB"

    for comparison in tree.find_all(*_COMPARISONS):
        if isinstance(comparison.parent, exp.Update) and comparison.arg_key == "expressions":
            continue  # SET col = value: an assignment, not a comparison
        operands = [comparison.this, comparison.expression, *comparison.expressions]
        if any(lob(o) for o in operands):
            yield f"{type(comparison).__name__} on a LOB"
    for ordered in tree.find_all(exp.Ordered):
        if lob(ordered.this):
            yield f"ORDER BY {_column(ordered.this)}"
    for group in tree.find_all(exp.Group):
        yield from (f"GROUP BY {_column(e)}" for e in group.expressions if lob(e))
    for select in tree.find_all(exp.Select):
        if select.args.get("distinct"):
            for item in select.expressions:
                if lob(item.this if isinstance(item, exp.Alias) else item):
                    yield f"DISTINCT {_column(item)}"


def _keys(tree: exp.Expr) -> Iterator[tuple[str, list[str]]]:
    """(kind, columns) of every primary/unique key and index the statement declares."""
    for key in tree.find_all(exp.PrimaryKey, exp.UniqueColumnConstraint):
        listed = key.this.expressions if isinstance(key.this, exp.Schema) else key.expressions
        names = [_column(e) for e in listed] or [_column(key.find_ancestor(exp.ColumnDef))]
        yield "key", [n for n in names if n]
    for inline in tree.find_all(exp.PrimaryKeyColumnConstraint):
        yield "key", [_column(inline.find_ancestor(exp.ColumnDef))]
    if isinstance(tree, exp.Create) and tree.kind == "INDEX":
        yield "index", [_column(c) for c in tree.find_all(exp.Column)]


def _group_aliases(tree: exp.Expr) -> Iterator[str]:
    for select in tree.find_all(exp.Select):
        aliases = {a.alias.upper() for a in select.expressions
                   if isinstance(a, exp.Alias) and _column(a.this) != a.alias.upper()}  # fmt: skip
        group = select.args.get("group")
        for item in group.expressions if group else ():
            if isinstance(item, exp.Column) and not item.table and item.name.upper() in aliases:
                yield f"GROUP BY alias {item.name}"


def type_findings(text: str, catalog: Catalog | None = None) -> list[tuple[str, str]]:
    """(rule, what was seen) for one statement."""
    try:
        tree = sqlglot.parse_one(text, read="oracle")
    except SqlglotError:
        return []
    catalog = backend_catalog() if catalog is None else catalog
    kinds = _kinds_in_scope(tree, catalog)
    found = [("O11-LOB-USE", seen) for seen in _lob_uses(tree, kinds)]
    for use, columns in _keys(tree):
        for column in columns:
            if kinds.get(column) == "LOB":
                found.append(("O11-LOB-USE", f"{column} in a {use}"))
            if kinds.get(column) == "TSTZ" and use == "key":
                found.append(("O11-TSTZ-KEY", f"{column} in a key"))
    found += [("O11-GROUP-ALIAS", seen) for seen in _group_aliases(tree)]
    return found
