"""What users install: the built wheel and sdist, used from fresh venvs outside the checkout.

One wheel and one sdist are built from a copy of the checkout (so the checkout gets no
``build/`` or ``*.egg-info``). Each venv is created under the temp dir, gets only the wheel
with one extra (pip resolves the rest from its index and cache), and runs with the checkout
off ``sys.path``:

- ``[runner]``: ``flightstate demo`` works with no service configured or reachable (it
  runs in a network namespace of its own where it can);
- ``[testing]``: a test file outside the repository uses the pytest plugin against the real
  services (PostgreSQL, MariaDB, a tansu broker) and passes, with nothing skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.corpus import REPO_ROOT
from tests.fixtures.readme import EMBEDDING, code_blocks
from tests.fixtures.services import DEFAULT_MYSQL_DSN

pytestmark = pytest.mark.slow

DOWNSTREAM_TEST = REPO_ROOT / "tests" / "testing" / "downstream" / "test_downstream.py"
PLUGIN_SECTION = "Testing with flightstate (the pytest plugin)"
_NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".nox", ".venv", "venv", "build", "dist", "*.egg-info", "__pycache__",
    ".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis", ".benchmarks",
)  # fmt: skip


def _run(argv: list[str], *, cwd: Path, env: dict[str, str] | None = None,
         timeout: float = 300) -> subprocess.CompletedProcess[str]:  # fmt: skip
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)  # fmt: skip
    assert done.returncode == 0, f"{argv}: {done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def _clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without the checkout or any flightstate setting."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("FLIGHTSTATE_") and key not in ("PYTHONPATH", "VIRTUAL_ENV")
    }
    return {**env, **extra}  # fmt: skip


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``{"wheel": ..., "sdist": ...}`` built from a copy of the checkout."""
    root = tmp_path_factory.mktemp("dist")
    source = root / "src"
    shutil.copytree(REPO_ROOT, source, ignore=_NOT_SOURCE)
    out = root / "out"
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), "."],
         cwd=source, env=_clean_env())  # fmt: skip
    _run([sys.executable, "-c",
          f"from setuptools import build_meta; build_meta.build_sdist({str(out)!r})"],
         cwd=source, env=_clean_env())  # fmt: skip
    (wheel,) = out.glob("flightstate-*.whl")
    (sdist,) = out.glob("flightstate-*.tar.gz")
    return {"wheel": wheel, "sdist": sdist}


def _without_network(argv: list[str]) -> list[str]:
    """*argv* in a new network namespace with only loopback (as root, where ``unshare``
    works): the machine's PostgreSQL and MariaDB do not exist there. Else *argv* as is."""
    if shutil.which("unshare") and os.geteuid() == 0:
        probe = subprocess.run(["unshare", "-n", "true"],  # noqa: S607 - system tool on PATH
                               capture_output=True, check=False)  # fmt: skip
        if probe.returncode == 0:
            return ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "demo", *argv]
    return argv


def _venv(where: Path, requirement: str) -> Path:
    """A fresh venv at *where* with *requirement* installed; its bin directory."""
    _run([sys.executable, "-m", "venv", str(where)], cwd=where.parent)
    bin_dir = where / "bin"
    _run([str(bin_dir / "python"), "-m", "pip", "install", "-q", requirement],
         cwd=where.parent, env=_clean_env())  # fmt: skip
    return bin_dir


def test_wheel_and_sdist_carry_what_the_docs_point_to(dists: dict[str, Path]) -> None:
    wheel_names = set(zipfile.ZipFile(dists["wheel"]).namelist())
    with tarfile.open(dists["sdist"]) as sdist:
        sdist_names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    shipped = ["flightstate_oracle/README.md", "flightstate_runner/cli.py",
               "flightstate_testing/plugin.py", "flightstate_testing/py.typed",
               "flightstate_pg/migrations/0001_core.rollback.sql",
               "flightstate_pg/migrations/0002_history_display.rollback.sql",
               "flightstate_runner/deploy/flightstate.service",
               "flightstate_runner/deploy/flightstate.env"]  # fmt: skip
    assert [n for n in shipped if n not in wheel_names] == []
    assert [n for n in shipped if n not in sdist_names] == []
    documents = ["README.md", "docs/deployment.md", "docs/operations.md", "docs/api/conf.py"]
    assert [n for n in documents if n not in sdist_names] == []  # the sdist carries docs/
    (entry_points,) = [n for n in wheel_names if n.endswith(".dist-info/entry_points.txt")]
    text = zipfile.ZipFile(dists["wheel"]).read(entry_points).decode()
    assert "flightstate = flightstate_runner.cli:main" in text
    assert "pytest11" not in text  # the plugin is opt-in: never loaded by merely installing


def test_runner_extra_runs_the_demo_in_a_fresh_venv(
    dists: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    home = tmp_path_factory.mktemp("runner-user")
    bin_dir = _venv(home / "venv", f"{dists['wheel']}[runner]")
    probe = "import flightstate_runner as r; print(r.__file__)"
    where = _run([str(bin_dir / "python"), "-c", probe], cwd=home, env=_clean_env()).stdout
    assert where.startswith(str(home / "venv"))  # the installed package, not the checkout
    summary_path = home / "summary.json"
    demo = [str(bin_dir / "flightstate"), "demo", "--messages", "800", "--flights", "60",
            "--summary-json", str(summary_path)]  # fmt: skip
    _run(_without_network(demo), cwd=home, env=_clean_env(PGHOST="/nonexistent", PGPORT="1"))
    summary = json.loads(summary_path.read_text())
    assert summary["messages_processed"] == summary["generated_messages"] >= 800
    assert summary["kafka"] is True  # the broker came with the extra
    assert summary["events_published"] == summary["outbox_rows"] > 0


def test_plugin_in_a_fresh_venv_against_real_services(
    dists: dict[str, Path],
    tmp_path_factory: pytest.TempPathFactory,
    pg_server_dsn: str,
    mysql_dsn: str,
) -> None:
    """``mysql_dsn`` only applies the skip/fail policy for MariaDB before the venv is built."""
    assert mysql_dsn
    home = tmp_path_factory.mktemp("downstream-team")
    bin_dir = _venv(home / "venv", f"{dists['wheel']}[testing]")
    project = home / "project"
    project.mkdir()
    shutil.copy(DOWNSTREAM_TEST, project / "test_downstream.py")
    (readme_example,) = code_blocks(PLUGIN_SECTION, document=EMBEDDING)
    (project / "test_readme_example.py").write_text(readme_example, encoding="utf-8")
    env = _clean_env(
        FLIGHTSTATE_TEST_PG_DSN=pg_server_dsn,
        FLIGHTSTATE_TEST_MYSQL_DSN=os.environ.get("FLIGHTSTATE_TEST_MYSQL_DSN")
        or DEFAULT_MYSQL_DSN,  # sis_inbox is then MariaDB; pg_table_inbox is used too
        FLIGHTSTATE_REQUIRE_SERVICES="1",  # a fixture that cannot get its service fails
    )
    done = _run([str(bin_dir / "python"), "-m", "pytest", "-q", "-rs", "-p",
                 "flightstate_testing.plugin", "-p", "no:cacheprovider"],
                cwd=project, env=env)  # fmt: skip
    assert "6 passed" in done.stdout, done.stdout
    assert "skipped" not in done.stdout
