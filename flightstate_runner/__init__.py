"""The reference runner: the `flightstate` command (`examples/runner.py` in a checkout).

Everything here wires adapters into the core; nothing connects at import time.
"""
