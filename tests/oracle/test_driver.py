"""Driver-side pure parts: error translation table, URL parsing, migration files, thick init."""

from __future__ import annotations

import itertools
import os

import oracledb
import pytest
from oracledb import errors as ora_errors

from flightstate_core.domain.errors import ConfigError, PermanentError, TransientError
from flightstate_oracle._errors import classify, is_unique_violation, translated
from flightstate_oracle._steps import load_migrations
from flightstate_oracle.session import CLIENT_DIR_ENV, init_thick_mode, parse_oracle_url


def _error(cls: type[oracledb.Error], message: str, *, recoverable: bool = False) -> oracledb.Error:
    """A real python-oracledb exception object, as the driver builds it."""
    return cls(ora_errors._Error(message, isrecoverable=recoverable))


@pytest.mark.parametrize(
    ("cls", "message", "expected"),
    [
        (
            oracledb.IntegrityError,
            "ORA-00001: unique constraint (FS.PROC_STATE_PK) violated",
            PermanentError,
        ),
        (oracledb.DatabaseError, "ORA-12899: value too large for column", PermanentError),
        (oracledb.DatabaseError, "ORA-00942: table or view does not exist", PermanentError),
        (
            oracledb.OperationalError,
            "ORA-03113: end-of-file on communication channel",
            TransientError,
        ),
        (oracledb.DatabaseError, "ORA-00060: deadlock detected", TransientError),
        (
            oracledb.DatabaseError,
            "ORA-30006: resource busy; acquire with WAIT timeout expired",
            TransientError,
        ),
        (oracledb.DatabaseError, "ORA-01555: snapshot too old", TransientError),
        (oracledb.InterfaceError, "DPY-4011: the database closed the connection", TransientError),
        (oracledb.DatabaseError, "ORA-20999: unknown application error", PermanentError),
        (oracledb.OperationalError, "ORA-29999: something operational", TransientError),
    ],
)
def test_classify(cls: type[oracledb.Error], message: str, expected: type[Exception]) -> None:
    result = classify(_error(cls, message))
    assert type(result) is expected
    assert message.split(":", maxsplit=1)[0] in str(result)


def test_recoverable_flag_means_transient() -> None:
    exc = _error(oracledb.DatabaseError, "ORA-29998: whatever", recoverable=True)
    assert isinstance(classify(exc), TransientError)


def test_choke_point_chains() -> None:
    exc = _error(oracledb.IntegrityError, "ORA-00001: unique constraint violated")
    assert is_unique_violation(exc)
    with pytest.raises(PermanentError) as caught, translated():
        raise exc
    assert caught.value.__cause__ is exc


def test_parse_url() -> None:
    s = parse_oracle_url("oracle://fs%40x:p%2Fw@db.example:1521/ORCL?max=8")
    assert (s.user, s.password, s.dsn, s.pool_max) == ("fs@x", "p/w", "db.example:1521/ORCL", 8)
    for bad in ("postgresql://u:p@h/db", "oracle://h:1521/ORCL", "oracle://u:p@h/X?color=1"):
        with pytest.raises(ConfigError):
            parse_oracle_url(bad)


def test_the_migrations_load_in_order_with_their_dependencies() -> None:
    migrations = load_migrations()
    assert [m.id for m in migrations] == [
        "0001_core",
        "0002_history_display",
        "0003_lifecycle_requests",
        "0004_outbox_watermark",
        "0005_runner_tables",
        "0007_inbox_gaps",
        "0008_outbox_parked",
        "0009_provenance",
    ]
    depends = {m.id: list(m.depends) for m in migrations}
    assert depends["0001_core"] == []
    # 0005 came after 0007..0009 had shipped: it hangs off 0004 beside them.
    assert depends["0005_runner_tables"] == ["0004_outbox_watermark"]
    chain = [m for m in migrations if m.id != "0005_runner_tables"]
    for earlier, later in itertools.pairwise(chain):
        assert depends[later.id] == [earlier.id]
    texts = [t for m in migrations for s in m.steps for t in (s.apply, s.undo) if t]
    assert not [t for t in texts if t.rstrip().endswith(";")]


@pytest.mark.skipif(bool(os.environ.get(CLIENT_DIR_ENV)), reason="a real client dir is set")
def test_thick_mode_without_client_libraries_is_a_config_error(tmp_path: object) -> None:
    with pytest.raises(ConfigError, match=CLIENT_DIR_ENV):
        init_thick_mode(str(tmp_path))


@pytest.mark.parametrize(
    ("message", "code", "lost"),
    [
        ("ORA-00060: deadlock detected", "ORA-00060", False),
        ("ORA-30006: resource busy; acquire with WAIT timeout expired", "ORA-30006", False),
        ("ORA-03113: end-of-file on communication channel", "ORA-03113", True),
        ("DPY-4011: the database closed the connection", "DPY-4011", True),
    ],
)
def test_a_transient_error_carries_its_code(message: str, code: str, lost: bool) -> None:
    """The retry budget's DEAD reason names the code; a lost session is never counted."""
    result = classify(_error(oracledb.DatabaseError, message))
    assert isinstance(result, TransientError)
    assert (result.code, result.store_wide) == (code, lost)
