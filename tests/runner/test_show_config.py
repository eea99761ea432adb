"""``flightstate config``: every setting's value in effect and the source it came from, the
later source winning as in ``load_config``; passwords never printed."""

from __future__ import annotations

import json
from pathlib import Path

from attrs import fields

from flightstate_runner.config import RunnerConfig
from tests.runner._cli import run_cli

PASSWORD = "s3cr3t-pw"  # noqa: S105 - a fake one, which must never be printed


def _site(tmp_path: Path) -> Path:
    site = tmp_path / "site.toml"
    site.write_text('[flightstate]\nairport_tz = "Europe/Paris"\nlease_ttl = 20\n'
                    'inbox_table = "from_file"\n', encoding="utf-8")  # fmt: skip
    return site


def _config(tmp_path: Path, *extra: str) -> tuple[int, str, str]:
    env = {"FLIGHTSTATE_LEASE_TTL": "30", "FLIGHTSTATE_INBOX_TABLE": "from_env",
           "FLIGHTSTATE_MYSQL_DSN": f"mysql://root:{PASSWORD}@127.0.0.1:3306/aodb"}  # fmt: skip
    done = run_cli("--config", str(_site(tmp_path)), "config", *extra,
                   "--inbox-table", "from_option",
                   "--store-dsn", f"postgresql://flight:{PASSWORD}@db.example/fs",
                   env=env, timeout=60)  # fmt: skip
    return done.returncode, done.stdout, done.stderr


def test_each_setting_with_its_value_and_source(tmp_path: Path) -> None:
    code, out, err = _config(tmp_path, "--json")
    assert (code, err) == (0, "")
    settings = json.loads(out)
    assert list(settings) == [f.name for f in fields(RunnerConfig)]
    assert settings["airport_tz"] == {"value": "Europe/Paris", "source": "file",
                                      "where": str(tmp_path / "site.toml")}  # fmt: skip
    assert settings["lease_ttl"] == {"value": 30.0, "source": "environment",
                                     "where": "FLIGHTSTATE_LEASE_TTL"}  # fmt: skip
    assert settings["inbox_table"] == {"value": "from_option", "source": "option",
                                       "where": "--inbox-table"}  # fmt: skip
    assert settings["batch_size"] == {"value": 1000, "source": "default", "where": ""}
    assert settings["store_dsn"]["value"] == "postgresql://flight:***@db.example/fs"
    assert settings["mysql_dsn"]["value"] == "mysql://root:***@127.0.0.1:3306/aodb"


def test_the_text_form_is_one_line_per_setting_without_secrets(tmp_path: Path) -> None:
    code, out, err = _config(tmp_path)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert len(lines) == len(fields(RunnerConfig))
    assert PASSWORD not in out
    by_name = {line.split()[0]: line.split(maxsplit=2)[1:] for line in lines}
    assert by_name["lease_ttl"] == ["30.0", "environment (FLIGHTSTATE_LEASE_TTL)"]
    assert by_name["inbox_table"] == ['"from_option"', "option (--inbox-table)"]
    assert by_name["batch_size"] == ["1000", "default"]
    assert by_name["pg_dsn"] == ["null", "default"]


def test_a_bad_setting_is_exit_2_naming_it(tmp_path: Path) -> None:
    done = run_cli("config", env={"FLIGHTSTATE_BATCH_SIZE": "nan"}, timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith("configuration error: batch_size")
    assert len(done.stderr.splitlines()) == 1
