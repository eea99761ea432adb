"""Developer sessions: ``nox -s tests``, ``lint``, ``mypy``, ``bench`` (all share one install)."""

from __future__ import annotations

from pathlib import Path

import nox

nox.options.sessions = ["tests", "lint", "mypy"]
nox.options.reuse_existing_virtualenvs = True

PYTHON = "3.11"
ROOT = Path(__file__).parent
# Loads a bench script without running its `if __name__ == "__main__"` block, then calls its
# main() once: works whether or not a script has that guard. Both the repo root and
# benchmarks/ are importable, as they would be for `python benchmarks/bench_x.py`, and
# sys.argv is the script's alone, so its argparse sees no arguments and takes its defaults.
RUN_BENCH = (
    "import runpy, sys; sys.path[:0] = ['benchmarks', '.']; sys.argv = sys.argv[1:]; "
    "runpy.run_path(sys.argv[0])['main']()"
)


def install(session: nox.Session) -> None:
    """Install the project with every extra, editable, as CI does."""
    session.install("-e", ".[dev]")


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """The README's test command; extra arguments go to pytest."""
    install(session)
    session.run("python", "-m", "pytest", "-q", *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff over the whole tree (the driver ban on flightstate_core included)."""
    install(session)
    session.run("ruff", "check", *(session.posargs or ["."]))


@nox.session(python=PYTHON)
def mypy(session: nox.Session) -> None:
    """mypy --strict over the packages listed in pyproject.toml."""
    install(session)
    session.run("mypy", *session.posargs)


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
