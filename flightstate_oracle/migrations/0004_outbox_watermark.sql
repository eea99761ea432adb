-- flightstate Oracle 11g schema, version 0004 (mirrors flightstate_pg 0004_outbox_watermark):
-- the outbox dispatch watermark. Additive only (docs/design.md, "Migrations"): one new table, initialised from
-- the existing rows.
-- Every transaction that inserts MSG_EVENT rows holds PIPELINE_LOCK (pump, lifecycle
-- cleanup, republish) and takes its ids from MSG_EVENT_SEQ (ORDER) under that lock, so
-- EVENT_ID order is commit order and the dispatcher's progress is one number: every
-- MSG_EVENT row with EVENT_ID <= LAST_EVENT_ID has been delivered to Kafka (or coalesced into
-- a later delivered record). MSG_EVENT.DISPATCHED_AT is no longer written; rows above the
-- watermark that the pre-0004 dispatcher had already marked are skipped, never re-sent.
-- MSG_EVENT_UNDELIV_IX stays until a later contract step.
-- depends: 0003_lifecycle_requests

-- step
CREATE TABLE OUTBOX_WATERMARK (
  OUTBOX_NAME VARCHAR2(64 BYTE) NOT NULL,
  LAST_EVENT_ID NUMBER(19) NOT NULL,
  UPDATED_AT TIMESTAMP(6) WITH TIME ZONE DEFAULT SYSTIMESTAMP NOT NULL,
  CONSTRAINT OUTBOX_WATERMARK_PK PRIMARY KEY (OUTBOX_NAME),
  CONSTRAINT OUTBOX_WATERMARK_ID_CK CHECK (LAST_EVENT_ID >= 0)
);
-- undo
DROP TABLE OUTBOX_WATERMARK CASCADE CONSTRAINTS PURGE;

-- The highest id such that every row with an id <= it is marked dispatched: just below the
-- oldest undispatched row (MSG_EVENT_UNDELIV_IX, whose expression is repeated here), else
-- the newest row, else 0.
-- step
INSERT INTO OUTBOX_WATERMARK (OUTBOX_NAME, LAST_EVENT_ID, UPDATED_AT)
SELECT 'kafka', COALESCE(
  (SELECT MIN(CASE WHEN DISPATCHED_AT IS NULL THEN EVENT_ID END) - 1 FROM MSG_EVENT
   WHERE CASE WHEN DISPATCHED_AT IS NULL THEN EVENT_ID END IS NOT NULL),
  (SELECT MAX(EVENT_ID) FROM MSG_EVENT),
  0), SYSTIMESTAMP
FROM DUAL
WHERE NOT EXISTS (SELECT 1 FROM OUTBOX_WATERMARK WHERE OUTBOX_NAME = 'kafka');
-- undo
-- The pre-0004 dispatcher reads DISPATCHED_AT, which the watermark dispatcher does not
-- write: mark every row at or below the watermark, so going back re-sends nothing that was
-- delivered (Oracle has no UPDATE .. FROM). The table (and its row) goes with the next undo.
UPDATE MSG_EVENT SET DISPATCHED_AT = (
    SELECT w.UPDATED_AT FROM OUTBOX_WATERMARK w WHERE w.OUTBOX_NAME = 'kafka')
WHERE DISPATCHED_AT IS NULL AND EVENT_ID <= (
    SELECT w.LAST_EVENT_ID FROM OUTBOX_WATERMARK w WHERE w.OUTBOX_NAME = 'kafka');
