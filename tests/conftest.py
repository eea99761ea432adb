"""Test configuration: registers the real-service fixtures of ``tests/fixtures/services.py``.

See that module's docstring for the fixture table and the skip/fail policy
(``FLIGHTSTATE_REQUIRE_SERVICES=1`` turns a missing service into a failure).
"""

pytest_plugins = ["tests.fixtures.services"]
