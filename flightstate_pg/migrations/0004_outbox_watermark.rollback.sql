-- Rollback of 0004_outbox_watermark. The pre-0004 dispatcher reads DISPATCHED_AT, which
-- the watermark dispatcher does not write: mark every row at or below the watermark first,
-- so going back re-sends nothing that was delivered.

UPDATE MSG_EVENT SET DISPATCHED_AT = w.UPDATED_AT
FROM OUTBOX_WATERMARK w
WHERE w.OUTBOX_NAME = 'kafka' AND MSG_EVENT.EVENT_ID <= w.LAST_EVENT_ID
  AND MSG_EVENT.DISPATCHED_AT IS NULL;
DROP TABLE OUTBOX_WATERMARK;
