-- flightstate PostgreSQL schema, version 0005: the reference runner's operational tables.
-- Additive only (docs/design.md, "Migrations"): two new tables, nothing existing changes.
-- depends: 0004_outbox_watermark
--
-- RUNNER_HEARTBEAT: one row per runner process (holder): when it last reported, whether it
-- led, its last error and a JSON snapshot of its counters; `runner.py status` reads it.
-- RUNNER_REQUEUE: an audit row per `runner.py requeue` of a DEAD message (what it was, what
-- it became), because requeue removes the message's DEAD PROC_STATE row before re-applying.

CREATE TABLE RUNNER_HEARTBEAT (
    HOLDER text PRIMARY KEY,
    UPDATED_AT timestamptz NOT NULL,
    IS_LEADER boolean NOT NULL,
    LAST_ERROR text,
    STATS text
);

CREATE TABLE RUNNER_REQUEUE (
    REQUEUE_ID bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    MESSAGE_ID bigint NOT NULL,
    REQUEUED_AT timestamptz NOT NULL DEFAULT now(),
    PREVIOUS_STATUS text NOT NULL,
    PREVIOUS_REASON text,
    PREVIOUS_ATTEMPTS integer,
    NEW_STATUS text
);

CREATE INDEX RUNNER_REQUEUE_MESSAGE_IX ON RUNNER_REQUEUE (MESSAGE_ID);
