-- Rollback of 0008_outbox_parked: the dispatcher before 0008 parks nothing (it retries a
-- record it cannot deliver). The parked records are lost; the events stay in MSG_EVENT
-- below the watermark (`flightstate republish --flid` re-sends a flight's state).
DROP TABLE OUTBOX_PARKED;
