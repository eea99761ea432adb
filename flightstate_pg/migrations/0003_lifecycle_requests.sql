-- flightstate PostgreSQL schema, version 0003: lifecycle cleanup, schedule requests, operator.
-- Additive only (docs/design.md, "Migrations"): new tables, a sequence, indexes; MSG_EVENT.KIND accepts one
-- more value ('REPUBLISH', written by the operator's republish).
-- depends: 0002_history_display

-- Cleanup candidates without an operation day, walked by FLID (the dated ones use
-- FLIGHT_SCHD_OPDAY_IX of 0002).
CREATE INDEX FLIGHT_SCHD_NULLDAY_IX ON FLIGHT_SCHD (FLID) WHERE OPERATION_DAY IS NULL;

-- flight_history: the events of one flight, in commit order.
CREATE INDEX MSG_EVENT_FLID_IX ON MSG_EVENT (FLID, EVENT_ID);

-- reconcile_responses: the applied SCHD RESP messages (few) without a scan of PROC_STATE.
CREATE INDEX PROC_STATE_RESP_IX ON PROC_STATE (MESSAGE_ID)
    WHERE MSG_TYPE = 'SCHD' AND MSG_STYP = 'RESP' AND STATUS = 'SUCCEEDED';

ALTER TABLE MSG_EVENT DROP CONSTRAINT MSG_EVENT_KIND_CHECK;
ALTER TABLE MSG_EVENT ADD CONSTRAINT MSG_EVENT_KIND_CK
    CHECK (KIND IN ('SNAPSHOT', 'TOMBSTONE', 'NOTIFY', 'REPUBLISH'));

-- SEQN of outbound requests: six digits, wrapping (docs/protocol.md §1).
CREATE SEQUENCE SCHD_REQUEST_SEQN MINVALUE 1 MAXVALUE 999999 START WITH 1 CYCLE;

CREATE TABLE SCHD_REQUEST (
    REQUEST_ID bigint GENERATED ALWAYS AS IDENTITY,
    SNDR text NOT NULL,
    WINDOW_START timestamptz NOT NULL,
    WINDOW_END timestamptz NOT NULL,
    SEQN integer NOT NULL,
    SENT_AT timestamptz NOT NULL,
    ATTEMPTS integer NOT NULL DEFAULT 1 CHECK (ATTEMPTS >= 1),
    STATUS text NOT NULL CHECK (STATUS IN ('OPEN', 'ANSWERED', 'FAILED')),
    ANSWERED_BY bigint,
    ANSWERED_AT timestamptz,
    FAILED_AT timestamptz,
    OUTBOUND_ID bigint,
    CREATED_AT timestamptz NOT NULL,
    CONSTRAINT SCHD_REQUEST_PK PRIMARY KEY (REQUEST_ID),
    CONSTRAINT SCHD_REQUEST_WINDOW_CK CHECK (WINDOW_START <= WINDOW_END)
);

CREATE INDEX SCHD_REQUEST_OPEN_IX ON SCHD_REQUEST (SENT_AT, REQUEST_ID) WHERE STATUS = 'OPEN';

-- One row per applied SCHD RESP: the request it answered, or NULL (unsolicited).
CREATE TABLE SCHD_RESPONSE_LOG (
    MESSAGE_ID bigint NOT NULL,
    REQUEST_ID bigint,
    WINDOW_START timestamptz,
    WINDOW_END timestamptz,
    MATCHED_AT timestamptz NOT NULL,
    CONSTRAINT SCHD_RESPONSE_LOG_PK PRIMARY KEY (MESSAGE_ID),
    CONSTRAINT SCHD_RESPONSE_LOG_REQ_FK FOREIGN KEY (REQUEST_ID) REFERENCES SCHD_REQUEST (REQUEST_ID)
);

CREATE INDEX SCHD_RESPONSE_LOG_UNSOL_IX ON SCHD_RESPONSE_LOG (MESSAGE_ID) WHERE REQUEST_ID IS NULL;
