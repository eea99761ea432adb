"""The code of docs/embedding.md runs as written: the library snippet, and the plugin example."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.corpus import REPO_ROOT
from tests.fixtures.readme import EMBEDDING, code_blocks

PLUGIN_SECTION = "Testing with flightstate (the pytest plugin)"


@pytest.mark.pg
def test_using_the_library_snippet_runs_as_written(
    pg_db: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (snippet,) = code_blocks("Using the library", document=EMBEDDING)
    monkeypatch.setenv("FLIGHTSTATE_PG_DSN", pg_db)
    code = compile(snippet, "docs/embedding.md: Using the library", "exec")
    exec(code, {})  # noqa: S102 - our own document
    assert capsys.readouterr().out == "SUCCEEDED 1 30NOV260935 1\n"
    exec(code, {})  # noqa: S102 - a second run: the re-sent message is a duplicate
    assert capsys.readouterr().out == "DUPLICATE 1 30NOV260935 2\n"


@pytest.mark.pg
@pytest.mark.kafka
def test_plugin_examples_pass_outside_the_checkout(
    tmp_path: Path, pg_server_dsn: str, kafka_bootstrap: str
) -> None:
    """The example files of docs/embedding.md (the plugin's, and Kafka's), run by pytest
    from a directory outside the repository with only ``-p flightstate_testing.plugin``
    (the checkout importable, nothing else)."""
    example, kafka = code_blocks(PLUGIN_SECTION, document=EMBEDDING)
    (tmp_path / "test_example.py").write_text(example + "\n\n" + kafka, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "FLIGHTSTATE_TEST_PG_DSN": pg_server_dsn,
           "FLIGHTSTATE_TEST_KAFKA_BOOTSTRAP": kafka_bootstrap,
           "FLIGHTSTATE_REQUIRE_SERVICES": "1"}  # fmt: skip
    env.pop("FLIGHTSTATE_TEST_MYSQL_DSN", None)  # sis_inbox: the PostgreSQL-table inbox here
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "flightstate_testing.plugin",
         "-p", "no:cacheprovider", "test_example.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "3 passed" in done.stdout
