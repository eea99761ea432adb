"""Composition root of the reference runner (``examples/runner.py``).

Everything here wires adapters into the core; nothing connects at import time.
"""
