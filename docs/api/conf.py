"""Sphinx configuration of the API reference (``nox -s docs``; `.ci/run` builds it with -W).

The reference is generated from the docstrings: each page is one package, and
``automodule`` with ``:members:`` documents exactly that package's ``__all__`` (its public
API). No intersphinx: the build must work offline from the lock (requirements/dev.txt).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, as CI installs it

project = "flightstate"
author = "flightstate"
copyright = "flightstate"
extensions = ["sphinx.ext.autodoc"]
exclude_patterns = ["_build"]
html_theme = "alabaster"
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"members": True, "undoc-members": True, "show-inheritance": True}
# Docstrings write code as ``code``; a single-backtick span is the same, not a cross-reference.
default_role = "code"
