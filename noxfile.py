"""Developer sessions: ``tests``, ``lint``, ``mypy``, ``docs``, ``bench`` (the locked install),
``tests-latest`` (the newest releases, no lock) and ``lock`` (refresh the lock)."""

from __future__ import annotations

from pathlib import Path

import nox

nox.options.sessions = ["tests", "lint", "mypy"]
nox.options.reuse_existing_virtualenvs = True

PYTHON = "3.11"
ROOT = Path(__file__).parent
LOCK = "requirements/dev.txt"
#: How the lock is made; `nox -s lock` runs it with --upgrade (the file's header repeats it).
COMPILE = (
    "uv", "pip", "compile", "pyproject.toml", "--extra", "dev", "--python-version", PYTHON,
    "--generate-hashes", "--no-emit-package", "flightstate", "-o", LOCK,
)  # fmt: skip
# Loads a bench script without running its `if __name__ == "__main__"` block, then calls its
# main() once: works whether or not a script has that guard. Both the repo root and
# benchmarks/ are importable, as they would be for `python benchmarks/bench_x.py`, and
# sys.argv is the script's alone, so its argparse sees no arguments and takes its defaults.
RUN_BENCH = (
    "import runpy, sys; sys.path[:0] = ['benchmarks', '.']; sys.argv = sys.argv[1:]; "
    "runpy.run_path(sys.argv[0])['main']()"
)


def install(session: nox.Session) -> None:
    """The locked versions of everything ``.[dev]`` needs, then the project itself, as CI does."""
    session.install("--require-hashes", "-r", LOCK)
    session.install("--no-deps", "-e", ".")


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """The README's test command; extra arguments go to pytest."""
    install(session)
    session.run("python", "-m", "pytest", "-q", "-n", "2", *session.posargs)


@nox.session(name="tests-latest", python=PYTHON, reuse_venv=False)
def tests_latest(session: nox.Session) -> None:
    """The suite on the newest releases the ranges allow, no lock: drift shows before it lands."""
    session.install("--upgrade", "-e", ".[dev]")
    session.run("python", "-m", "pip", "list", "--format=freeze")
    session.run("python", "-m", "pytest", "-q", "-n", "2", *session.posargs)


@nox.session(python=PYTHON)
def lock(session: nox.Session) -> None:
    """Refresh requirements/dev.txt to the newest allowed releases; then run `nox -s tests`."""
    session.install("uv")
    session.run(*COMPILE, "--upgrade", *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff over the whole tree (the driver ban on flightstate_core included), then the
    import contracts (the layers, in pyproject.toml)."""
    install(session)
    session.run("ruff", "check", *(session.posargs or ["."]))
    session.run("lint-imports", "--no-cache")


@nox.session(python=PYTHON)
def mypy(session: nox.Session) -> None:
    """mypy --strict over the packages listed in pyproject.toml."""
    install(session)
    session.run("mypy", *session.posargs)


@nox.session(python=PYTHON)
def docs(session: nox.Session) -> None:
    """The API reference (docs/api, Sphinx autodoc) into build/docs-api, warnings as errors,
    as `.ci/run` builds it; then the settings reference is checked against the code."""
    install(session)
    session.run("python", "-m", "sphinx", "-W", "--keep-going", "-b", "html", "docs/api",
                "build/docs-api")  # fmt: skip
    session.run("python", "-m", "flightstate_runner.settings_doc", "--check",
                "docs/configuration.md")  # fmt: skip


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Run every ``benchmarks/bench_*.py`` script (each has a ``main()`` printing a table).

    ``nox -s bench -- NAME`` runs only scripts whose file name contains NAME.
    """
    install(session)
    scripts = sorted((ROOT / "benchmarks").glob("bench_*.py"))
    if session.posargs:
        scripts = [s for s in scripts if any(arg in s.name for arg in session.posargs)]
    if not scripts:
        session.error("no benchmarks/bench_*.py scripts found")
    for script in scripts:
        session.log(f"--- {script.name}")
        session.run("python", "-c", RUN_BENCH, str(script.relative_to(ROOT)))
