"""The API reference (docs/api, Sphinx autodoc) builds with warnings as errors, as
`.ci/run` and ``nox -s docs`` build it, offline, and documents every name of each
package's ``__all__`` (its public API)."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.corpus import REPO_ROOT

API = REPO_ROOT / "docs" / "api"


def _pages() -> list[str]:
    index = (API / "index.rst").read_text(encoding="utf-8")
    return re.findall(r"^   (flightstate_[\w.]+)$", index, re.MULTILINE)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("docs-api")
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(API),
         str(out)],
        capture_output=True, text=True, timeout=300, check=False, cwd=REPO_ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    return out


def test_every_library_package_has_a_page() -> None:
    packages = {"flightstate_core", "flightstate_pg", "flightstate_oracle", "flightstate_kafka",
                "flightstate_mysql", "flightstate_testing"}  # fmt: skip
    assert packages <= set(_pages())
    for page in _pages():
        assert (API / f"{page}.rst").is_file(), page


def test_each_page_documents_its_packages_all(built: Path) -> None:
    for page in _pages():
        html = (built / f"{page}.html").read_text(encoding="utf-8")
        module = importlib.import_module(page)
        missing = [name for name in module.__all__ if f'id="{page}.{name}"' not in html
                   and not _documented_elsewhere(page, name)]  # fmt: skip
        assert missing == [], page


def _documented_elsewhere(page: str, name: str) -> bool:
    """A name a page excludes because another page documents it (a re-exported port)."""
    text = (API / f"{page}.rst").read_text(encoding="utf-8")
    return bool(re.search(rf":exclude-members:.*\b{re.escape(name)}\b", text))
