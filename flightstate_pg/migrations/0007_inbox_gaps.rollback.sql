-- Rollback of 0007_inbox_gaps: the pump before 0007 neither reads nor writes these. Open
-- gaps are forgotten (their rows, if they ever come, are not applied by that pump).
ALTER TABLE PROC_STATE DROP COLUMN LATE;
ALTER TABLE INBOX_CURSOR DROP COLUMN GAPS_ABANDONED, DROP COLUMN LATE_ROWS;
DROP TABLE INBOX_GAP;
