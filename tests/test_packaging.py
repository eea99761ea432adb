"""What users install: the built wheel and sdist, used from fresh venvs outside the checkout.

One wheel and one sdist are built from a copy of the checkout (so the checkout gets no
``build/`` or ``*.egg-info``). Each venv is created under the temp dir, gets only the wheel
with one extra (pip resolves the rest from its index and cache), and runs with the checkout
off ``sys.path``:

- ``[runner]``: ``flightstate demo`` works with no service configured or reachable (it
  runs in a network namespace of its own where it can);
- ``[testing]``: a test file outside the repository uses the pytest plugin against the real
  services (PostgreSQL, MariaDB, a tansu broker) and passes, with nothing skipped;
- ``[runner,testing]``: the site kit: ``flightstate check`` passes on a healthy deployment
  and names each break with its fix; ``flightstate selftest --store`` proves a database and
  leaves nothing in it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pymysql
import pytest
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

from flightstate_mysql import create_cminmsgs, parse_mysql_dsn
from flightstate_pg import migrate
from flightstate_testing import postgres
from tests.fixtures.corpus import REPO_ROOT
from tests.fixtures.readme import EMBEDDING, code_blocks
from tests.fixtures.services import DEFAULT_MYSQL_DSN
from tests.fixtures.site import limited_user, schemas, server_zone
from tests.fixtures.util import unique_name

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
    kafka_bootstrap: str,
) -> None:
    """``mysql_dsn`` only applies the skip/fail policy for MariaDB before the venv is built."""
    assert mysql_dsn
    home = tmp_path_factory.mktemp("downstream-team")
    bin_dir = _venv(home / "venv", f"{dists['wheel']}[testing]")
    project = home / "project"
    project.mkdir()
    shutil.copy(DOWNSTREAM_TEST, project / "test_downstream.py")
    readme_example, kafka_example = code_blocks(PLUGIN_SECTION, document=EMBEDDING)
    (project / "test_readme_example.py").write_text(readme_example, encoding="utf-8")
    (project / "test_kafka_example.py").write_text(kafka_example, encoding="utf-8")
    env = _clean_env(
        FLIGHTSTATE_TEST_PG_DSN=pg_server_dsn,
        FLIGHTSTATE_TEST_MYSQL_DSN=os.environ.get("FLIGHTSTATE_TEST_MYSQL_DSN")
        or DEFAULT_MYSQL_DSN,  # sis_inbox is then MariaDB; pg_table_inbox is used too
        FLIGHTSTATE_TEST_KAFKA_BOOTSTRAP=kafka_bootstrap,
        FLIGHTSTATE_REQUIRE_SERVICES="1",  # a fixture that cannot get its service fails
    )
    done = _run([str(bin_dir / "python"), "-m", "pytest", "-q", "-rs", "-p",
                 "flightstate_testing.plugin", "-p", "no:cacheprovider"],
                cwd=project, env=env)  # fmt: skip
    assert "7 passed" in done.stdout, done.stdout
    assert "skipped" not in done.stdout


def _attempt(
    argv: list[str], *, cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def _failed_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    assert done.returncode == 1, done.stdout + done.stderr
    return [line for line in done.stdout.splitlines() if line.startswith("\u2718 ")]


@pytest.fixture
def site(
    dists: dict[str, Path],
    tmp_path_factory: pytest.TempPathFactory,
    pg_server_dsn: str,
    mysql_dsn: str,
    kafka_bootstrap: str,
) -> Iterator[tuple[Path, dict[str, str]]]:
    """A healthy deployment (a migrated store, the inbox table, provisioned topics, the
    airport at the inbox server's zone) and the `flightstate` of a fresh venv with the wheel's
    runner and testing extras; yields (bin dir, its environment)."""
    home = tmp_path_factory.mktemp("site")
    bin_dir = _venv(home / "venv", f"{dists['wheel']}[runner,testing]")
    store = postgres.create_database(pg_server_dsn)
    with pymysql.connect(**parse_mysql_dsn(mysql_dsn)) as conn:
        create_cminmsgs(conn, "cminmsgs")
    env = _clean_env(
        FLIGHTSTATE_STORE_DSN=store,
        FLIGHTSTATE_MYSQL_DSN=mysql_dsn,
        FLIGHTSTATE_KAFKA_BOOTSTRAP=kafka_bootstrap,
        FLIGHTSTATE_AIRPORT_TZ=server_zone(mysql_dsn),
        FLIGHTSTATE_TOPIC_SCHD=unique_name("site_schd"),
        FLIGHTSTATE_TOPIC_MSG=unique_name("site_msg"),
    )
    for command in ("migrate", "topics"):
        _run([str(bin_dir / "flightstate"), command], cwd=home, env=env)
    yield bin_dir, env
    postgres.drop_database(pg_server_dsn, store)


def test_check_passes_on_a_healthy_site_and_names_each_break(
    site: tuple[Path, dict[str, str]], pg_server_dsn: str, mysql_dsn: str, kafka_bootstrap: str
) -> None:
    bin_dir, env = site
    check = [str(bin_dir / "flightstate"), "check"]
    healthy = _run(check, cwd=bin_dir, env=env).stdout.splitlines()
    assert len(healthy) > 10
    assert all(line.startswith("\u2714 ") for line in healthy), healthy

    utc_elsewhere = "Asia/Shanghai" if env["FLIGHTSTATE_AIRPORT_TZ"] != "Etc/GMT-8" else "UTC"
    zone = _failed_lines(
        _attempt(check, cwd=bin_dir, env={**env, "FLIGHTSTATE_AIRPORT_TZ": utc_elsewhere})
    )
    assert [line.split(":")[0] for line in zone] == ["\u2718 inbox time zone"]

    missing = unique_name("nowhere")
    topic = _failed_lines(
        _attempt(check, cwd=bin_dir, env={**env, "FLIGHTSTATE_TOPIC_MSG": missing})
    )
    assert topic == [
        f"\u2718 topic {missing}: missing \u2014 run `flightstate topics` (or create "
        "it as the deployment guide says)"
    ]

    plain = unique_name("plain_schd")
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})  # kept until the topic exists
    admin.create_topics([NewTopic(plain, 1, 1)])[plain].result(10)
    compaction = _failed_lines(
        _attempt(check, cwd=bin_dir, env={**env, "FLIGHTSTATE_TOPIC_SCHD": plain})
    )
    assert [line.split(":")[0] for line in compaction] == [f"\u2718 topic {plain} compaction"]

    behind = postgres.create_database(pg_server_dsn)
    try:
        migrate(behind, "0005_runner_tables")
        schema = _failed_lines(
            _attempt(check, cwd=bin_dir, env={**env, "FLIGHTSTATE_STORE_DSN": behind})
        )
    finally:
        postgres.drop_database(pg_server_dsn, behind)
    assert schema == [
        "\u2718 store schema: behind: 0006_write_path not applied \u2014 run `flightstate migrate`"
    ]

    with limited_user(mysql_dsn, "cminmsgs") as reader:
        grants = _failed_lines(
            _attempt(check, cwd=bin_dir, env={**env, "FLIGHTSTATE_MYSQL_DSN": reader})
        )
    # The account sees only the columns it may read: the table line says so, and the
    # grants line names what to grant.
    assert [line.split(":")[0] for line in grants] == [
        "\u2718 inbox table cminmsgs",
        grants[1].split(":")[0],
    ]
    assert grants[1].startswith("\u2718 grants of ")
    assert "missing UPDATE (CMINMSGS_DATE_PROCESSED)" in grants[1]


def test_selftest_proves_a_store_and_leaves_nothing(
    site: tuple[Path, dict[str, str]], pg_server_dsn: str
) -> None:
    bin_dir, env = site
    target = postgres.create_database(pg_server_dsn)
    try:
        before = schemas(target)
        done = _run(
            [str(bin_dir / "flightstate"), "selftest", "--store", target],
            cwd=bin_dir,
            env=env,
            timeout=900,
        )
        assert schemas(target) == before
    finally:
        postgres.drop_database(pg_server_dsn, target)
    lines = done.stdout.splitlines()
    assert lines[-1].startswith("selftest passed: ")
    assert all(line.startswith("\u2714 ") for line in lines[:-1])
    absent = _attempt(
        [
            str(bin_dir / "flightstate"),
            "selftest",
            "--store",
            "postgresql://site:s3cret@127.0.0.1:1/store",
        ],
        cwd=bin_dir,
        env=env,
    )
    assert absent.returncode == 1
    assert absent.stderr.strip().count("\n") == 0
    assert "store not reachable at 127.0.0.1:1/store" in absent.stderr
    assert "s3cret" not in absent.stderr
