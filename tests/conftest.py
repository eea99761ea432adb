"""Test configuration: the project's tests use the shipped pytest plugin, as downstream
projects do (``flightstate_testing.plugin``: fixture table and skip/fail policy in its
docstring; ``FLIGHTSTATE_REQUIRE_SERVICES=1`` turns a missing service into a failure), plus
the guard that fails the run if the machine's shared MariaDB or PostgreSQL restarted during
it (``tests/fixtures/shared_servers.py``)."""

pytest_plugins = ["flightstate_testing.plugin", "tests.fixtures.shared_servers"]
