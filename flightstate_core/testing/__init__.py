"""Test support shipped with the core: Hypothesis strategies and deterministic builders.

- ``flightstate_testing.strategies``: strategies for every message kind (needs
  ``hypothesis``, a test dependency; import it explicitly).
- ``flightstate_testing.seeded``: ``build_dnld`` / ``build_flop`` produce realistic
  SIS XML bytes from a seed (no Hypothesis needed), for benchmarks and fixtures.

The pytest plugin, builders of every message family and ``pump_until_idle`` live in
``flightstate_testing`` (``pip install 'flightstate[testing]'``), outside the pure core.
"""
