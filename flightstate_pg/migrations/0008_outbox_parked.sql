-- flightstate PostgreSQL schema, version 0008: parked outbox events (docs/design.md,
-- "Outbox dispatch"). Additive only: one new table.
-- depends: 0007_inbox_gaps
--
-- OUTBOX_PARKED: MSG_EVENT rows the dispatcher cannot deliver for a permanent reason (over
-- the record size limit, or refused by the broker as invalid). The dispatcher writes a row
-- here and then moves the watermark past the event, so one such record never blocks the
-- others. A row stays unresolved (RESOLVED_AT NULL, listed by `status`) until a later
-- `schd` record of its FLID is delivered (a later change, or `flightstate republish`).
-- No foreign key to MSG_EVENT: delivered events are purged, their parked record is kept.
CREATE TABLE OUTBOX_PARKED (
    EVENT_ID bigint NOT NULL,
    FLID text NOT NULL,
    TOPIC text NOT NULL,
    STATE_VERSION bigint NOT NULL,
    SIZE_BYTES bigint NOT NULL,
    REASON text NOT NULL,
    PARKED_AT timestamptz NOT NULL,
    RESOLVED_AT timestamptz,
    CONSTRAINT OUTBOX_PARKED_PK PRIMARY KEY (EVENT_ID)
);

-- The unresolved ones, by flight: what `status` lists and a delivery resolves.
CREATE INDEX OUTBOX_PARKED_OPEN_IX ON OUTBOX_PARKED (FLID, EVENT_ID) WHERE RESOLVED_AT IS NULL;
