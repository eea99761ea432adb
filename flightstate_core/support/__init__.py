"""Helpers the adapters and the runner share, with no domain in them: a lazily opened
connection (``lazy``), DSN credential checks and redaction (``dsn``), and opt-in
garbage-collector tuning for a long-running process (``tuning``)."""
