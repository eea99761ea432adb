-- flightstate Oracle 11g schema, 0008_outbox_parked (was 0006.outbox_parked), as flightstate_pg:
-- parked outbox events (docs/design.md, "Outbox dispatch"). Additive only: one new table.
-- OUTBOX_PARKED: MSG_EVENT rows the dispatcher cannot deliver for a permanent reason (over
-- the record size limit, or refused by the broker as invalid), written before the watermark
-- moves past them. Unresolved (RESOLVED_AT NULL) until a later schd record of the FLID is
-- delivered. No foreign key to MSG_EVENT: delivered events are purged, this record is kept.
-- depends: 0007_inbox_gaps

-- step
CREATE TABLE OUTBOX_PARKED (
  EVENT_ID NUMBER(19) NOT NULL,
  FLID VARCHAR2(64 BYTE) NOT NULL,
  TOPIC VARCHAR2(64 BYTE) NOT NULL,
  STATE_VERSION NUMBER(19) NOT NULL,
  SIZE_BYTES NUMBER(19) NOT NULL,
  REASON VARCHAR2(4000 BYTE) NOT NULL,
  PARKED_AT TIMESTAMP(6) WITH TIME ZONE NOT NULL,
  RESOLVED_AT TIMESTAMP(6) WITH TIME ZONE,
  CONSTRAINT OUTBOX_PARKED_PK PRIMARY KEY (EVENT_ID)
);
-- undo
DROP TABLE OUTBOX_PARKED CASCADE CONSTRAINTS PURGE;

-- step
CREATE INDEX OUTBOX_PARKED_FLID_IX ON OUTBOX_PARKED (FLID, EVENT_ID);
-- undo
DROP INDEX OUTBOX_PARKED_FLID_IX;
