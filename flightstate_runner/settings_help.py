"""What each runner setting does, one sentence or a few, for the generated reference
(``flightstate_runner.settings_doc``). Names, defaults and ranges are not repeated here:
they come from ``RunnerConfig``. Markdown; no ``|`` (the reference is a table)."""

from __future__ import annotations

__all__ = ["GROUPS", "HELP"]

#: The reference's sections, in order, and the settings each lists.
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Connections", ("store_dsn", "pg_dsn", "oracle_client_dir", "inbox", "mysql_dsn",
                     "inbox_table",
                     "kafka_bootstrap", "topic_schd", "topic_msg")),
    ("The airport's clock", ("airport_tz", "inbox_tz", "opday_cutover")),
    ("Reading the inbox", ("batch_size", "batch_max_bytes", "batch_max_records",
                           "poll_active_interval", "poll_active_period", "poll_quiet_interval",
                           "gather_interval", "backfill_interval", "backfill_lock_wait_timeout")),
    ("Gaps in the inbox ids", ("gap_grace", "gap_horizon", "gap_reconcile_interval",
                               "gap_reconcile_window")),
    ("Retries and the retry budget", ("backoff_initial", "backoff_max",
                                      "max_unexpected_attempts", "retry_budget_attempts",
                                      "retry_budget_seconds")),
    ("Leadership and store sessions", ("holder", "lease_ttl", "poll_interval", "db_lock_timeout",
                                       "db_idle_in_transaction_timeout", "db_statement_timeout",
                                       "db_keepalive_idle", "idle_wait")),
    ("Kafka dispatch", ("dispatch_batch", "kafka_transactional_id", "kafka_max_record_bytes",
                        "kafka_outage_log_every")),
    ("Housekeeping inside `run`", ("cleanup_interval", "retention_days", "quiet_days",
                                   "null_day_quiet_days", "cleanup_batch", "request_interval",
                                   "request_timeout", "request_max_attempts", "purge_interval",
                                   "outbox_retention_hours")),
    ("Metrics and logs", ("metrics_port", "metrics_bind", "log_level")),
)  # fmt: skip

HELP: dict[str, str] = {
    "store_dsn": "The state store; its scheme picks the backend: `postgresql://user@host/db`, "
    "`oracle://user:pass@host:1521/service` (Oracle 11g, needs Oracle Client 19+) or "
    "`memory://name` (tests). Unset: `pg_dsn`; neither: `demo` starts an embedded PostgreSQL.",
    "pg_dsn": "The PostgreSQL state store, `postgresql://user@host:5432/db` or a libpq "
    "`key=value` string: the alias `store_dsn` had before it existed (both set: they must agree).",
    "oracle_client_dir": "Where the Oracle Client libraries are (python-oracledb thick mode, "
    "needed for 11g). Empty: the system library path.",
    "inbox": "Where messages are read: `mysql`, the AODB's table at `mysql_dsn`, or `store`, "
    "a lab table of the same shape in the store's database (made by `inbox-init`; not on "
    "Oracle). A MySQL inbox without its DSN stops the command: the kind is never guessed.",
    "mysql_dsn": "The AODB's MySQL/MariaDB inbox, `mysql://user:pass@host:3306/db`; needed "
    "with `inbox = mysql`, refused with `inbox = store`.",
    "inbox_table": "The inbox table's name (a plain identifier, at most 30 characters).",
    "kafka_bootstrap": "Kafka brokers, `host:port[,host:port]`. Unset: events stay in the "
    "outbox until a runner with a broker dispatches them.",
    "topic_schd": "The compacted topic of full flight states (key FLID, tombstone on delete).",
    "topic_msg": "The topic of change notices (time retention).",
    "airport_tz": "IANA zone of the local times in SIS messages (SODT, ESTT, DTTM ...).",
    "inbox_tz": "Zone of the inbox's DATE_RECEIVED. Empty: the inbox server's own clock, "
    "whatever its zone (each read asks the server for its time); name a zone only for an "
    "AODB that stamps its own wall clock there.",
    "opday_cutover": "Local time (`HH:MM`) at which an operation day starts.",
    "batch_size": "Inbox rows per batch transaction.",
    "batch_max_bytes": "Message text per inbox read: a batch ends at this many bytes or "
    "`batch_size` rows, whichever comes first (one row always moves). A row over the 4 MiB "
    "message limit is measured, never read, and ends DEAD.",
    "batch_max_records": "Decoded flight records per batch: a package weighs its FLTRs, a FLOP "
    "its blocks, any other message 1; one message always moves. Bounds the memory of dense "
    "schedule packages.",
    "poll_active_interval": "Inbox poll while messages arrived within `poll_active_period`.",
    "poll_active_period": "Quiet time after the last message before the poll doubles back to "
    "`poll_quiet_interval`; 0: always the quiet interval.",
    "poll_quiet_interval": "Inbox poll once the inbox is quiet: the longest the first message "
    "after a quiet spell waits. Raise it to spare a busy AODB database.",
    "gather_interval": "While a batch is applied, the read-ahead reads the inbox again this "
    "often and adds what arrived to the next batch; 0: one read per batch.",
    "backfill_interval": "At least this long between backfill flushes, so one inbox UPDATE "
    "carries several outcomes; 0: a flush per commit. The outcome is committed either way.",
    "backfill_lock_wait_timeout": "`innodb_lock_wait_timeout` of the backfill session on "
    "MariaDB/MySQL: the longest a write-back waits for an AODB row lock per try.",
    "gap_grace": "How long FIFO waits at a fresh gap in the inbox ids; 0: never wait.",
    "gap_horizon": "How long an empty gap is watched before it is abandoned (at least "
    "`gap_grace`).",
    "gap_reconcile_interval": "How often rows below the cursor with no outcome and no "
    "DATE_PROCESSED are looked for; 0: never.",
    "gap_reconcile_window": "How many ids below the cursor that look covers.",
    "backoff_initial": "First retry delay after a transient failure (doubles per retry).",
    "backoff_max": "Longest retry delay.",
    "max_unexpected_attempts": "Unexpected errors (bugs, not database failures) before a "
    "message is DEAD.",
    "retry_budget_attempts": "The head message is DEAD once it failed transiently at least "
    "this many times and for `retry_budget_seconds`, while the store answered its health "
    "probe; 0: retry for ever.",
    "retry_budget_seconds": "The time half of the retry budget.",
    "holder": "This process's name in the lease, heartbeats and `status` (`run --holder`); "
    "default `host:pid`. Each process adds its own instance id, so two with one name never "
    "both lead.",
    "lease_ttl": "Leader lease; a standby takes over after it expires.",
    "poll_interval": "A standby's lease poll, and the dispatcher's fallback poll of an empty "
    "outbox.",
    "db_lock_timeout": "PostgreSQL `lock_timeout` of every runner session: the longest wait "
    "for a row lock (the lease row, PIPELINE_LOCK); 0: off.",
    "db_idle_in_transaction_timeout": "`idle_in_transaction_session_timeout`: the server ends "
    "a session frozen inside a transaction and frees its locks; 0: off.",
    "db_statement_timeout": "`statement_timeout` of every runner session (a timeout is "
    "retried); 0: off.",
    "db_keepalive_idle": "TCP keepalive idle time, client and server side; probes every "
    "idle/2 s, three of them; 0: the system's defaults.",
    "idle_wait": "`run --until-idle`: seconds idle with failing backfills or an undelivered "
    "outbox before it stops with exit code 3.",
    "dispatch_batch": "Outbox rows per dispatch round.",
    "kafka_transactional_id": "Kafka transactional id, shared by every runner of one "
    "deployment (it fences a replaced dispatcher). Empty: `flightstate-` + `topic_schd`.",
    "kafka_max_record_bytes": "Largest Kafka record before compression: the producer's "
    "`message.max.bytes`, and `max.message.bytes` of the topics `flightstate topics` "
    "creates. A larger record is parked (listed by `status`), not sent.",
    "kafka_outage_log_every": "During a broker outage, one summary line per this many seconds.",
    "cleanup_interval": "Seconds between lifecycle cleanup runs; 0: off.",
    "retention_days": "Days past its operation day before an ended flight may be removed "
    "(also the default of `cleanup --retention-days`).",
    "quiet_days": "Without an end, days without a message before a flight may be removed.",
    "null_day_quiet_days": "Days without a message before a flight with no operation day may "
    "be removed.",
    "cleanup_batch": "Candidate flights per cleanup transaction.",
    "request_interval": "Seconds between schedule-request upkeep runs (match, resend); 0: off.",
    "request_timeout": "Seconds before an unanswered schedule request is sent again.",
    "request_max_attempts": "Sends before a schedule request is FAILED.",
    "purge_interval": "Seconds between purges of delivered outbox rows; 0: off.",
    "outbox_retention_hours": "Hours a delivered outbox row is kept.",
    "metrics_port": "Prometheus port of `run`; unset: no endpoint. A port in use exits 2.",
    "metrics_bind": "Address the metrics endpoint binds (it has no authentication): an IP "
    "address or host name; `0.0.0.0` is every interface.",
    "log_level": "DEBUG, INFO, WARNING or ERROR.",
}
