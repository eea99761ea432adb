-- flightstate Oracle 11g schema, 0007_inbox_gaps (was 0005.inbox_gaps), as flightstate_pg:
-- gap-aware inbox reading. Additive only (docs/design.md, "Migrations"): one new table and three columns with
-- a constant default (11g adds a NOT NULL column with a default as a dictionary change,
-- no row is rewritten).
-- INBOX_GAP: open gaps of an inbox, ids LOW_ID..HIGH_ID (inclusive) missing below its
-- cursor since FIRST_SEEN_AT, written in the transaction of the batch that went past them.
-- depends: 0004_outbox_watermark

-- step
CREATE TABLE INBOX_GAP (
  INBOX_NAME VARCHAR2(64 BYTE) NOT NULL,
  LOW_ID NUMBER(19) NOT NULL,
  HIGH_ID NUMBER(19) NOT NULL,
  FIRST_SEEN_AT TIMESTAMP(6) WITH TIME ZONE NOT NULL,
  CONSTRAINT INBOX_GAP_PK PRIMARY KEY (INBOX_NAME, LOW_ID),
  CONSTRAINT INBOX_GAP_RANGE_CK CHECK (LOW_ID <= HIGH_ID)
);
-- undo
DROP TABLE INBOX_GAP CASCADE CONSTRAINTS PURGE;

-- step
ALTER TABLE INBOX_CURSOR ADD (LATE_ROWS NUMBER(19) DEFAULT 0 NOT NULL);
-- undo
ALTER TABLE INBOX_CURSOR DROP COLUMN LATE_ROWS;

-- step
ALTER TABLE INBOX_CURSOR ADD (GAPS_ABANDONED NUMBER(19) DEFAULT 0 NOT NULL);
-- undo
ALTER TABLE INBOX_CURSOR DROP COLUMN GAPS_ABANDONED;

-- step
ALTER TABLE PROC_STATE ADD (LATE NUMBER(1) DEFAULT 0 NOT NULL);
-- undo
ALTER TABLE PROC_STATE DROP COLUMN LATE;

-- step
ALTER TABLE PROC_STATE ADD CONSTRAINT PROC_STATE_LATE_CK CHECK (LATE IN (0, 1));
-- undo
ALTER TABLE PROC_STATE DROP CONSTRAINT PROC_STATE_LATE_CK;
