"""Test configuration: registers the real-service fixtures of ``tests/fixtures/services.py``.

See that module's docstring for the fixture table and the skip/fail policy
(``FLIGHTSTATE_REQUIRE_SERVICES=1`` turns a missing service into a failure), and the guard
that fails the run if the machine's shared MariaDB or PostgreSQL restarted during it.
"""

pytest_plugins = ["tests.fixtures.services", "tests.fixtures.shared_servers"]
