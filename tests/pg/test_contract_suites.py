"""Every store-side contract suite on PostgreSQL, on both servers (``fresh_pg``: the
machine's and an embedded one). The suites are the classes ``flightstate selftest`` runs on
a site's own database (``flightstate_testing.selftest.pg_suites``): one list for both, its
``__all__``, imported whole so that a suite added there is collected here too."""

from __future__ import annotations

import pytest

from flightstate_testing.selftest.pg_suites import *  # noqa: F403 - the suites, collected here

pytestmark = pytest.mark.pg
