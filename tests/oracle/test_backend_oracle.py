"""The Oracle backend's parts that need no server: the DSN check, what a failure means to
the runner, and the one line naming the server (``flightstate_oracle.backend``). Thick
mode without Oracle Client is one line too: tests/runner/test_store_dsn.py runs it."""

from __future__ import annotations

import pytest

from flightstate_core.domain.errors import ConfigError, PermanentError, TransientError
from flightstate_core.ports import StoreFailure
from flightstate_oracle.backend import _named, check_dsn, failure_of


def test_check_dsn_accepts_the_url_form_and_names_what_is_missing() -> None:
    check_dsn("oracle://flight:pw@db.example:1521/ORCL")
    check_dsn("oracle://flight:pw@db.example/ORCL?max=8")
    with pytest.raises(ValueError, match=r"^needs user, password and host$"):
        check_dsn("oracle://flight@db.example:1521/ORCL")
    with pytest.raises(ValueError, match=r"^unknown option 'tls'$"):
        check_dsn("oracle://flight:pw@db.example/ORCL?tls=1")


@pytest.mark.parametrize(
    ("error", "failure"),
    [
        (TransientError("Oracle ORA-12541: TNS:no listener", code="ORA-12541", store_wide=True),
         StoreFailure.UNREACHABLE),
        (TransientError("Oracle DPY-6005: cannot connect", code="DPY-6005", store_wide=True),
         StoreFailure.UNREACHABLE),
        (PermanentError("Oracle ORA-00942: table or view does not exist"), StoreFailure.OTHER),
        (TransientError("Oracle ORA-00060: deadlock", code="ORA-00060"), StoreFailure.OTHER),
    ],
)  # fmt: skip
def test_failures_are_told_apart(error: Exception, failure: StoreFailure) -> None:
    assert failure_of(error) is failure


def test_a_refused_login_is_refused() -> None:
    refused = TransientError("Oracle ORA-01017: invalid username/password", code="ORA-01017")
    assert failure_of(refused) is StoreFailure.REFUSED


def test_a_pool_failure_is_one_line_naming_the_server() -> None:
    cause = TransientError("Oracle ORA-12541: TNS:no listener\nmore detail", code="ORA-12541",
                           store_wide=True)  # fmt: skip
    named = _named(cause, "db.example:1521/ORCL")
    assert isinstance(named, TransientError)
    assert str(named) == "Oracle at db.example:1521/ORCL: Oracle ORA-12541: TNS:no listener"
    assert (named.code, named.store_wide) == ("ORA-12541", True)
    assert str(_named(ConfigError("bad\nworse"), "h/S")) == "Oracle at h/S: bad"
