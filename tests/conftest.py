"""Test configuration: the project's tests use the shipped pytest plugin, as downstream
projects do (``flightstate_testing.plugin``: fixture table and skip/fail policy in its
docstring; ``FLIGHTSTATE_REQUIRE_SERVICES=1`` turns a missing service into a failure)."""

pytest_plugins = ["flightstate_testing.plugin"]
