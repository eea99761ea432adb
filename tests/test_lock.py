"""The lock (requirements/dev.txt) covers what pyproject.toml asks for, with exact versions.

CI and the README install from the lock, so a new release of a dependency cannot turn main
red; this test makes a dependency added to pyproject.toml without a lock refresh (`nox -s
lock`) fail here, instead of being installed unpinned, or not at all, on the next machine.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "dev.txt"
_PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==([^\s\\]+)", re.MULTILINE)


def locked() -> dict[str, Version]:
    """Exact pins of the lock, by canonical name."""
    return {canonicalize_name(n): Version(v) for n, v in _PIN.findall(LOCK.read_text())}


def dev_requirements() -> list[Requirement]:
    """Every requirement `.[dev]` pulls in directly, through the project's own extras."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras: dict[str, list[str]] = project["optional-dependencies"]
    out: list[Requirement] = []
    pending, seen = ["dev"], set()
    for name in pending:
        seen.add(name)
        for text in extras[name]:
            req = Requirement(text)
            if canonicalize_name(req.name) == "flightstate":
                pending += [e for e in req.extras if e not in seen]
            else:
                out.append(req)
    return [Requirement(t) for t in project["dependencies"]] + out


def test_every_line_of_the_lock_is_an_exact_pin_with_hashes() -> None:
    blocks = [b for b in re.split(r"\n(?=\S)", LOCK.read_text()) if not b.startswith("#")]
    assert len(blocks) > 40
    for block in blocks:
        assert _PIN.match(block), block[:80]
        assert "--hash=sha256:" in block, block[:80]


def test_lock_satisfies_every_requirement_of_pyproject() -> None:
    pins = locked()
    requirements = dev_requirements()
    assert {"psycopg", "pytest", "sqlglot", "mypy", "ruff"} <= {r.name for r in requirements}
    for req in requirements:
        name = canonicalize_name(req.name)
        assert name in pins, f"{req} is not in {LOCK.name}: run `nox -s lock`"
        assert req.specifier.contains(pins[name], prereleases=True), (
            f"{LOCK.name} pins {name}=={pins[name]}, outside {req}: run `nox -s lock`"
        )
