"""Configuration: precedence, validation errors (exit code 2 naming the setting), secrets."""

from __future__ import annotations

from datetime import time
from pathlib import Path

import pytest

from flightstate_core.domain.errors import ConfigError
from flightstate_runner.config import load_config, redact
from tests.runner._cli import run_cli


def test_layers_defaults_toml_env_options(tmp_path: Path) -> None:
    toml = tmp_path / "fs.toml"
    toml.write_text(
        '[flightstate]\nbatch_size = 50\nairport_tz = "Europe/Paris"\ntopic_msg = "from-file"\n'
    )
    env = {"FLIGHTSTATE_BATCH_SIZE": "70", "FLIGHTSTATE_OPDAY_CUTOVER": "04:30"}
    config = load_config(toml, env, batch_size=90)
    assert config.batch_size == 90  # option beats environment beats file
    assert config.opday_cutover == time(4, 30)
    assert config.airport_tz == "Europe/Paris"
    assert config.topic_msg == "from-file"
    assert config.topic_schd == "schd"
    assert load_config(None, {}).airport_tz == "Asia/Shanghai"


@pytest.mark.parametrize(
    ("env", "setting"),
    [
        ({"FLIGHTSTATE_BATCH_SIZE": "many"}, "batch_size"),
        ({"FLIGHTSTATE_BATCH_SIZE": "0"}, "batch_size"),
        ({"FLIGHTSTATE_AIRPORT_TZ": "Mars/Olympus"}, "airport_tz"),
        ({"FLIGHTSTATE_OPDAY_CUTOVER": "25:00"}, "opday_cutover"),
        ({"FLIGHTSTATE_LEASE_TTL": "-1"}, "lease_ttl"),
        ({"FLIGHTSTATE_INBOX_TABLE": "cminmsgs; drop"}, "inbox_table"),
        ({"FLIGHTSTATE_METRICS_PORT": "70000"}, "metrics_port"),
        ({"FLIGHTSTATE_DB_LOCK_TIMEOUT": "nan"}, "db_lock_timeout"),
        ({"FLIGHTSTATE_DB_IDLE_IN_TRANSACTION_TIMEOUT": "inf"}, "db_idle_in_transaction_timeout"),
        ({"FLIGHTSTATE_DB_STATEMENT_TIMEOUT": "-1"}, "db_statement_timeout"),
        ({"FLIGHTSTATE_DB_KEEPALIVE_IDLE": "99999"}, "db_keepalive_idle"),
        ({"FLIGHTSTATE_BACKFILL_LOCK_WAIT_TIMEOUT": "0"}, "backfill_lock_wait_timeout"),
        ({"FLIGHTSTATE_IDLE_WAIT": "0"}, "idle_wait"),
        ({"FLIGHTSTATE_IDLE_WAIT": "nan"}, "idle_wait"),
        ({"FLIGHTSTATE_KAFKA_OUTAGE_LOG_EVERY": "inf"}, "kafka_outage_log_every"),
        ({"FLIGHTSTATE_KAFKA_TRANSACTIONAL_ID": "a b"}, "kafka_transactional_id"),
    ],
)
def test_bad_setting_exits_2_naming_it(env: dict[str, str], setting: str) -> None:
    with pytest.raises(ConfigError, match=setting):
        load_config(None, env)
    result = run_cli("status", env={"FLIGHTSTATE_PG_DSN": "postgresql://x@127.0.0.1:1/x", **env})
    assert result.returncode == 2, result.stderr
    assert "configuration error" in result.stderr
    assert setting in result.stderr


def test_unknown_key_in_toml_file(tmp_path: Path) -> None:
    toml = tmp_path / "fs.toml"
    toml.write_text("[flightstate]\nbatch_sise = 5\n")
    result = run_cli("--config", str(toml), "status")
    assert result.returncode == 2
    assert "batch_sise" in result.stderr


def test_broken_toml_file(tmp_path: Path) -> None:
    toml = tmp_path / "fs.toml"
    toml.write_text("[flightstate\n")
    result = run_cli("--config", str(toml), "status")
    assert result.returncode == 2
    assert str(toml) in result.stderr


@pytest.mark.parametrize("command", ["run", "status", "migrate", "show 1", "requeue 5"])
def test_missing_pg_dsn_is_a_config_error(command: str) -> None:
    result = run_cli(*command.split())
    assert result.returncode == 2, result.stderr
    assert "pg_dsn" in result.stderr
    assert "FLIGHTSTATE_PG_DSN" in result.stderr


def test_topics_needs_a_bootstrap() -> None:
    result = run_cli("topics")
    assert result.returncode == 2
    assert "kafka_bootstrap" in result.stderr


def test_cli_option_overrides_environment() -> None:
    result = run_cli(
        "--airport-tz", "Nowhere/Land", "status", env={"FLIGHTSTATE_AIRPORT_TZ": "Asia/Shanghai"}
    )
    assert result.returncode == 2
    assert "Nowhere/Land" in result.stderr


def test_password_never_printed() -> None:
    secret = "s3cr3t-pw"  # noqa: S105 - a fake password that must never be printed
    dsn = f"postgresql://flight:{secret}@127.0.0.1:1/db?connect_timeout=2"
    result = run_cli("status", env={"FLIGHTSTATE_PG_DSN": dsn})
    assert result.returncode == 1
    assert secret not in result.stderr + result.stdout
    assert redact(dsn) == "postgresql://flight:***@127.0.0.1:1/db?connect_timeout=2"
    assert redact("host=h password='a b' user=u") == "host=h password=*** user=u"


def test_takeover_bound_from_the_settings() -> None:
    config = load_config(None, {"FLIGHTSTATE_LEASE_TTL": "2", "FLIGHTSTATE_POLL_INTERVAL": "0.1",
                                "FLIGHTSTATE_BACKOFF_MAX": "1", "FLIGHTSTATE_DB_LOCK_TIMEOUT": "1",
                                "FLIGHTSTATE_DB_IDLE_IN_TRANSACTION_TIMEOUT": "3",
                                "FLIGHTSTATE_DB_STATEMENT_TIMEOUT": "5"})  # fmt: skip
    assert config.takeover_bound() == pytest.approx(5 + 1 + 1 + 0.1)
    assert load_config(None, {}).takeover_bound() == pytest.approx(20 + 3 + 10 + 0.5)


_NON_FINITE = ("nan", "inf", "-inf", "1e400")
ALL_INTERFACES = "0.0.0.0"  # noqa: S104 - a value to parse, nothing binds here


@pytest.mark.parametrize(
    ("name", "value"),
    [
        *[
            (name, bad)
            for name in (
                "poll_interval",
                "lease_ttl",
                "backoff_initial",
                "backoff_max",
                "retention_days",
                "quiet_days",
                "null_day_quiet_days",
                "cleanup_interval",
                "request_interval",
                "request_timeout",
                "purge_interval",
                "outbox_retention_hours",
            )
            for bad in _NON_FINITE
        ],
        ("lease_ttl", "1e308"),
        ("poll_interval", "1e9"),
        ("retention_days", "1e308"),
        ("quiet_days", "-1e9"),
        ("cleanup_interval", "-1"),
        ("batch_size", "1e3"),
        ("batch_size", "100001"),
        ("batch_size", "9" * 5000),
        ("batch_max_bytes", "1000"),
        ("batch_max_bytes", "inf"),
        ("batch_max_records", "0"),
        ("batch_max_records", "1e3"),
        ("dispatch_batch", "-5"),
        ("max_unexpected_attempts", "0"),
        ("metrics_bind", "0.0.0.0; rm"),
    ],
)
def test_every_number_is_finite_and_in_range(name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=f"^{name}: "):
        load_config(None, {f"FLIGHTSTATE_{name.upper()}": value})


def test_numbers_at_their_bounds_are_accepted() -> None:
    config = load_config(None, {
        "FLIGHTSTATE_RETENTION_DAYS": "0", "FLIGHTSTATE_QUIET_DAYS": "3650",
        "FLIGHTSTATE_LEASE_TTL": "86400", "FLIGHTSTATE_BATCH_MAX_BYTES": str(1024 * 1024),
        "FLIGHTSTATE_METRICS_BIND": ALL_INTERFACES,
    })  # fmt: skip
    assert (config.retention_days, config.quiet_days, config.lease_ttl) == (0, 3650, 86400)
    assert config.metrics_bind == ALL_INTERFACES
    assert load_config(None, {}).metrics_bind == "127.0.0.1"  # loopback unless asked


@pytest.mark.parametrize(
    ("env", "setting"),
    [
        ({"FLIGHTSTATE_POLL_INTERVAL": "inf"}, "poll_interval"),
        ({"FLIGHTSTATE_LEASE_TTL": "nan"}, "lease_ttl"),
        ({"FLIGHTSTATE_RETENTION_DAYS": "nan"}, "retention_days"),
        ({"FLIGHTSTATE_PG_DSN": "notadsn"}, "pg_dsn"),
        ({"FLIGHTSTATE_PG_DSN": "mysql://u@h/db"}, "pg_dsn"),
        ({"FLIGHTSTATE_MYSQL_DSN": "notadsn"}, "mysql_dsn"),
        ({"FLIGHTSTATE_MYSQL_DSN": "mysql://u@h:port/db"}, "mysql_dsn"),
    ],
)
def test_run_refuses_non_finite_numbers_and_malformed_dsns(
    env: dict[str, str], setting: str
) -> None:
    result = run_cli(
        "run", "--until-idle", env={"FLIGHTSTATE_PG_DSN": "postgresql://x@127.0.0.1:1/x", **env}
    )
    assert result.returncode == 2, result.stderr
    assert f"configuration error: {setting}: " in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("command", [("status",), ("inbox-init",), ("generate", "--messages", "1")])
@pytest.mark.parametrize("setting", ["pg_dsn", "mysql_dsn"])
def test_a_malformed_dsn_is_exit_2_naming_it(command: tuple[str, ...], setting: str) -> None:
    """A DSN that does not parse (an operator path, docs/design.md, "Operator view"): exit 1
    without the setting's name for ``FLIGHTSTATE_PG_DSN=notadsn``."""
    env = {"FLIGHTSTATE_PG_DSN": "postgresql://x@127.0.0.1:1/x",
           "FLIGHTSTATE_MYSQL_DSN": "mysql://x@127.0.0.1:1/x",
           f"FLIGHTSTATE_{setting.upper()}": "notadsn"}  # fmt: skip
    result = run_cli(*command, env=env)
    assert result.returncode == 2, result.stderr
    assert f"configuration error: {setting}: " in result.stderr
    assert "Traceback" not in result.stderr


def test_the_start_log_shows_the_transactional_id_in_effect() -> None:
    """Unset, it is derived from the schd topic; set, it is the value given."""
    derived = load_config(None, topic_schd="airport_schd").describe()
    assert derived["kafka_transactional_id"] == "flightstate-airport_schd"
    given = load_config(None, kafka_transactional_id="pek-flightstate").describe()
    assert given["kafka_transactional_id"] == "pek-flightstate"
