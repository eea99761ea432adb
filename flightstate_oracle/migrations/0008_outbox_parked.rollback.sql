-- Undo 0008_outbox_parked: the dispatcher before it parks nothing; the parked records are
-- lost (the events stay in MSG_EVENT below the watermark).
DROP TABLE OUTBOX_PARKED PURGE;
