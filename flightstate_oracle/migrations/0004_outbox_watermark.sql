-- flightstate Oracle 11g schema, version 0004 (mirrors flightstate_pg 0004_outbox_watermark):
-- the outbox dispatch watermark. Additive only (review F6): one new table, initialised from
-- the existing rows.
-- Every transaction that inserts MSG_EVENT rows holds PIPELINE_LOCK (pump, lifecycle
-- cleanup, republish) and takes its ids from MSG_EVENT_SEQ (ORDER) under that lock, so
-- EVENT_ID order is commit order and the dispatcher's progress is one number: every
-- MSG_EVENT row with EVENT_ID <= LAST_EVENT_ID has been delivered to Kafka (or coalesced into
-- a later delivered record). MSG_EVENT.DISPATCHED_AT is no longer written; rows above the
-- watermark that the pre-0004 dispatcher had already marked are skipped, never re-sent.
-- MSG_EVENT_UNDELIV_IX stays until a later contract step.
-- depends: 0003_lifecycle_requests

CREATE TABLE OUTBOX_WATERMARK (
  OUTBOX_NAME VARCHAR2(64 BYTE) NOT NULL,
  LAST_EVENT_ID NUMBER(19) NOT NULL,
  UPDATED_AT TIMESTAMP(6) WITH TIME ZONE DEFAULT SYSTIMESTAMP NOT NULL,
  CONSTRAINT OUTBOX_WATERMARK_PK PRIMARY KEY (OUTBOX_NAME),
  CONSTRAINT OUTBOX_WATERMARK_ID_CK CHECK (LAST_EVENT_ID >= 0)
);

-- The highest id such that every row with an id <= it is marked dispatched: just below the
-- oldest undispatched row (MSG_EVENT_UNDELIV_IX, whose expression is repeated here), else
-- the newest row, else 0.
INSERT INTO OUTBOX_WATERMARK (OUTBOX_NAME, LAST_EVENT_ID, UPDATED_AT)
SELECT 'kafka', COALESCE(
  (SELECT MIN(CASE WHEN DISPATCHED_AT IS NULL THEN EVENT_ID END) - 1 FROM MSG_EVENT
   WHERE CASE WHEN DISPATCHED_AT IS NULL THEN EVENT_ID END IS NOT NULL),
  (SELECT MAX(EVENT_ID) FROM MSG_EVENT),
  0), SYSTIMESTAMP
FROM DUAL;
