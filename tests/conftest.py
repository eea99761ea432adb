"""Test configuration: the project's tests use the shipped pytest plugin, as downstream
projects do (``flightstate_testing.plugin``: fixture table and skip/fail policy in its
docstring; ``FLIGHTSTATE_REQUIRE_SERVICES=1`` turns a missing service into a failure), plus
the guard that fails the run if the machine's shared MariaDB or PostgreSQL restarted during
it (``tests/fixtures/shared_servers.py``)."""

import pytest

pytest_plugins = ["flightstate_testing.plugin", "tests.fixtures.shared_servers"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``longest`` first (stable otherwise): on two workers (``-n 2``, the
    README's command) each starts at once on one worker while the other runs the rest,
    instead of starting last and running alone."""
    items.sort(key=lambda item: item.get_closest_marker("longest") is None)
