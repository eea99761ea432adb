"""The reference runner from a source checkout: ``python examples/runner.py demo``.

The runner itself is the installed ``flightstate`` command (``flightstate_runner.cli``); this
file only makes the checkout importable, so the command works without ``pip install -e``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's packages

from flightstate_runner.cli import main

if __name__ == "__main__":
    main()
