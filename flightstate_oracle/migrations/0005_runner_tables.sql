-- flightstate Oracle 11g schema, 0005_runner_tables, as flightstate_pg: the reference runner's
-- operational tables, so `flightstate migrate` and `status` work on either store. Additive
-- only: two new tables and a sequence, nothing existing changes. It came after 0007..0009
-- had shipped, so it depends on 0004 beside them; a schema at 0009 gets it on its next
-- `migrate`.
-- RUNNER_HEARTBEAT: one row per runner process (holder, `name#instance`): when it last
-- reported, whether it led, its last error and a JSON snapshot of its counters (CLOB: no
-- JSON type in 11g); `flightstate status` reads it.
-- RUNNER_REQUEUE: an audit row per requeue of a DEAD message (what it was, what it became);
-- its ids come from RUNNER_REQUEUE_SEQ (no IDENTITY in 11g).
-- depends: 0004_outbox_watermark

-- step
CREATE TABLE RUNNER_HEARTBEAT (
  HOLDER VARCHAR2(400 BYTE) NOT NULL,
  UPDATED_AT TIMESTAMP(6) WITH TIME ZONE NOT NULL,
  IS_LEADER NUMBER(1) NOT NULL,
  LAST_ERROR CLOB,
  STATS CLOB,
  CONSTRAINT RUNNER_HEARTBEAT_PK PRIMARY KEY (HOLDER),
  CONSTRAINT RUNNER_HEARTBEAT_LEADER_CK CHECK (IS_LEADER IN (0, 1))
);
-- undo
DROP TABLE RUNNER_HEARTBEAT CASCADE CONSTRAINTS PURGE;

-- step
CREATE SEQUENCE RUNNER_REQUEUE_SEQ START WITH 1 INCREMENT BY 1 CACHE 20 NOCYCLE;
-- undo
DROP SEQUENCE RUNNER_REQUEUE_SEQ;

-- step
CREATE TABLE RUNNER_REQUEUE (
  REQUEUE_ID NUMBER(19) NOT NULL,
  MESSAGE_ID NUMBER(19) NOT NULL,
  REQUEUED_AT TIMESTAMP(6) WITH TIME ZONE DEFAULT SYSTIMESTAMP NOT NULL,
  PREVIOUS_STATUS VARCHAR2(16 BYTE) NOT NULL,
  PREVIOUS_REASON CLOB,
  PREVIOUS_ATTEMPTS NUMBER(10),
  NEW_STATUS VARCHAR2(16 BYTE),
  CONSTRAINT RUNNER_REQUEUE_PK PRIMARY KEY (REQUEUE_ID)
);
-- undo
DROP TABLE RUNNER_REQUEUE CASCADE CONSTRAINTS PURGE;

-- step
CREATE INDEX RUNNER_REQUEUE_MESSAGE_IX ON RUNNER_REQUEUE (MESSAGE_ID);
-- undo
DROP INDEX RUNNER_REQUEUE_MESSAGE_IX;
