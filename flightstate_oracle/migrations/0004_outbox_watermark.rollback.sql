-- Undo 0004_outbox_watermark. The pre-0004 dispatcher reads DISPATCHED_AT, which the
-- watermark dispatcher does not write: mark every row at or below the watermark first, so
-- going back re-sends nothing that was delivered (Oracle has no UPDATE .. FROM).
UPDATE MSG_EVENT SET DISPATCHED_AT = (
    SELECT w.UPDATED_AT FROM OUTBOX_WATERMARK w WHERE w.OUTBOX_NAME = 'kafka')
WHERE DISPATCHED_AT IS NULL AND EVENT_ID <= (
    SELECT w.LAST_EVENT_ID FROM OUTBOX_WATERMARK w WHERE w.OUTBOX_NAME = 'kafka');
DROP TABLE OUTBOX_WATERMARK PURGE;
