-- flightstate PostgreSQL schema, version 0004: the outbox dispatch watermark.
-- Additive only (docs/design.md, "Migrations"): one new table, initialised from the existing rows.
-- depends: 0003_lifecycle_requests
--
-- Every transaction that inserts MSG_EVENT rows holds PIPELINE_LOCK (pump, lifecycle
-- cleanup, republish), so EVENT_ID order is commit order and the dispatcher's progress is
-- one number: every MSG_EVENT row with EVENT_ID <= LAST_EVENT_ID has been delivered to Kafka
-- (or coalesced into a later delivered record). MSG_EVENT.DISPATCHED_AT is no longer
-- written; rows above the watermark that the pre-0004 dispatcher had already marked are
-- skipped, never re-sent. MSG_EVENT_UNDISPATCHED_IX stays until a later contract step.

CREATE TABLE OUTBOX_WATERMARK (
    OUTBOX_NAME text NOT NULL,
    LAST_EVENT_ID bigint NOT NULL,
    UPDATED_AT timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT OUTBOX_WATERMARK_PK PRIMARY KEY (OUTBOX_NAME),
    CONSTRAINT OUTBOX_WATERMARK_ID_CK CHECK (LAST_EVENT_ID >= 0)
);

-- The highest id such that every row with an id <= it is marked dispatched: just below the
-- oldest undispatched row (MSG_EVENT_UNDISPATCHED_IX), else the newest row, else 0.
INSERT INTO OUTBOX_WATERMARK (OUTBOX_NAME, LAST_EVENT_ID)
SELECT 'kafka', COALESCE(
    (SELECT min(EVENT_ID) - 1 FROM MSG_EVENT WHERE DISPATCHED_AT IS NULL),
    (SELECT max(EVENT_ID) FROM MSG_EVENT),
    0);
