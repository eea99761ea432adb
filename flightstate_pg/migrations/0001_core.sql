-- flightstate PostgreSQL schema, version 0001: current state, outbox, processing.
-- Generated once from flightstate_core/layout.py; frozen (never edit an applied migration).
-- depends:

CREATE TABLE FLIGHT_SCHD (
    FLID text NOT NULL,
    STATE text NOT NULL CHECK (STATE IN ('ACTIVE', 'DELETED')),
    STATE_VERSION bigint NOT NULL,
    OPERATION_DAY date,
    LAST_MESSAGE_ID bigint,
    CREATED_AT timestamptz,
    UPDATED_AT timestamptz,
    FFID text,
    ALCD text,
    ALSC text,
    FLNO text,
    MVIN text,
    FLIN text,
    FLTY text,
    ACFT text,
    RENO text,
    TRML text,
    MAXP text,
    STND text,
    RUNW text,
    FTSS text,
    EXSC text,
    EXSR text,
    REMC text,
    PHAG text,
    FHAG text,
    MHAG text,
    VIPP text,
    VIPR text,
    LBNO text,
    LBWT text,
    PAXC text,
    TAOP text,
    TAFL text,
    TAID text,
    CSOP text,
    CSFT text,
    MAID text,
    SODT text,
    SODT_TS timestamptz,
    ESTT text,
    ESTT_TS timestamptz,
    ACTT text,
    ACTT_TS timestamptz,
    APPT text,
    APPT_TS timestamptz,
    BOTM text,
    BOTM_TS timestamptz,
    LACL text,
    LACL_TS timestamptz,
    FINT text,
    FINT_TS timestamptz,
    EGSR text,
    EGSR_TS timestamptz,
    EGST text,
    EGST_TS timestamptz,
    CNCL text,
    CNCL_TS timestamptz,
    COBT text,
    COBT_TS timestamptz,
    TOBT text,
    TOBT_TS timestamptz,
    EOBT text,
    EOBT_TS timestamptz,
    CTOT text,
    CTOT_TS timestamptz,
    IEST text,
    IEST_TS timestamptz,
    PEDT text,
    PEDT_TS timestamptz,
    NEAT text,
    NEAT_TS timestamptz,
    PADT text,
    PADT_TS timestamptz,
    NAAT text,
    NAAT_TS timestamptz,
    PORT_OPEN text,
    PORT_OPEN_TS timestamptz,
    PORT_CLOSE text,
    PORT_CLOSE_TS timestamptz,
    FDIV_TEXT text,
    FDIV_DDES text,
    FDIV_DDIR text,
    FRET_TEXT text,
    FRET_REID text,
    FLAB_TEXT text,
    FLAB_ARES text,
    SRVT text,
    VIPF text,
    MAFL text,
    CONSTRAINT FLIGHT_SCHD_PK PRIMARY KEY (FLID)
);

CREATE TABLE FLIGHT_GATE (
    FLID text NOT NULL,
    ORDINAL integer NOT NULL CHECK (ORDINAL >= 1),
    SOURCE_SEQ text,
    GATE text,
    PGOT text,
    PGOT_TS timestamptz,
    PGCT text,
    PGCT_TS timestamptz,
    GOTM text,
    GOTM_TS timestamptz,
    GCTM text,
    GCTM_TS timestamptz,
    GTYP text,
    CONSTRAINT FLIGHT_GATE_PK PRIMARY KEY (FLID, ORDINAL),
    CONSTRAINT FLIGHT_GATE_FK FOREIGN KEY (FLID) REFERENCES FLIGHT_SCHD (FLID) ON DELETE CASCADE
);

CREATE TABLE FLIGHT_CHECKIN (
    FLID text NOT NULL,
    ORDINAL integer NOT NULL CHECK (ORDINAL >= 1),
    SOURCE_SEQ text,
    CHKC text,
    CCLS text,
    PCOT text,
    PCOT_TS timestamptz,
    PCCT text,
    PCCT_TS timestamptz,
    COTM text,
    COTM_TS timestamptz,
    CCTM text,
    CCTM_TS timestamptz,
    CTYP text,
    CONSTRAINT FLIGHT_CHECKIN_PK PRIMARY KEY (FLID, ORDINAL),
    CONSTRAINT FLIGHT_CHECKIN_FK FOREIGN KEY (FLID) REFERENCES FLIGHT_SCHD (FLID) ON DELETE CASCADE
);

CREATE TABLE FLIGHT_BELT (
    FLID text NOT NULL,
    ORDINAL integer NOT NULL CHECK (ORDINAL >= 1),
    SOURCE_SEQ text,
    BELT text,
    BCLS text,
    PCOT text,
    PCOT_TS timestamptz,
    PCCT text,
    PCCT_TS timestamptz,
    FBAG text,
    FBAG_TS timestamptz,
    LBAG text,
    LBAG_TS timestamptz,
    BTYP text,
    CONSTRAINT FLIGHT_BELT_PK PRIMARY KEY (FLID, ORDINAL),
    CONSTRAINT FLIGHT_BELT_FK FOREIGN KEY (FLID) REFERENCES FLIGHT_SCHD (FLID) ON DELETE CASCADE
);

CREATE TABLE FLIGHT_STAND_PLAN (
    FLID text NOT NULL,
    ORDINAL integer NOT NULL CHECK (ORDINAL >= 1),
    SOURCE_SEQ text,
    PSST text,
    STST text,
    STST_TS timestamptz,
    STET text,
    STET_TS timestamptz,
    PSHN text,
    PSTM text,
    PSTM_TS timestamptz,
    PSID text,
    TRTM text,
    TRTM_TS timestamptz,
    CONSTRAINT FLIGHT_STAND_PLAN_PK PRIMARY KEY (FLID, ORDINAL),
    CONSTRAINT FLIGHT_STAND_PLAN_FK FOREIGN KEY (FLID) REFERENCES FLIGHT_SCHD (FLID) ON DELETE CASCADE
);

CREATE TABLE FLIGHT_CHUTE (
    FLID text NOT NULL,
    ORDINAL integer NOT NULL CHECK (ORDINAL >= 1),
    SOURCE_SEQ text,
    CHUT text,
    CCLS text,
    PCBT text,
    PCBT_TS timestamptz,
    PCET text,
    PCET_TS timestamptz,
    CBTM text,
    CBTM_TS timestamptz,
    CETM text,
    CETM_TS timestamptz,
    CTYP text,
    CONSTRAINT FLIGHT_CHUTE_PK PRIMARY KEY (FLID, ORDINAL),
    CONSTRAINT FLIGHT_CHUTE_FK FOREIGN KEY (FLID) REFERENCES FLIGHT_SCHD (FLID) ON DELETE CASCADE
);

CREATE TABLE FLIGHT_DELAY (
    FLID text NOT NULL,
    ORDINAL integer NOT NULL CHECK (ORDINAL >= 1),
    SOURCE_SEQ text,
    CODE text,
    STRT text,
    STRT_TS timestamptz,
    DURA text,
    DURA_MIN integer,
    DLTX text,
    CONSTRAINT FLIGHT_DELAY_PK PRIMARY KEY (FLID, ORDINAL),
    CONSTRAINT FLIGHT_DELAY_FK FOREIGN KEY (FLID) REFERENCES FLIGHT_SCHD (FLID) ON DELETE CASCADE
);

CREATE TABLE FLIGHT_BRIDGE_OP (
    FLID text NOT NULL,
    ORDINAL integer NOT NULL CHECK (ORDINAL >= 1),
    SOURCE_SEQ text,
    ABDG text,
    ABOP text,
    AOTM text,
    AOTM_TS timestamptz,
    CONSTRAINT FLIGHT_BRIDGE_OP_PK PRIMARY KEY (FLID, ORDINAL),
    CONSTRAINT FLIGHT_BRIDGE_OP_FK FOREIGN KEY (FLID) REFERENCES FLIGHT_SCHD (FLID) ON DELETE CASCADE
);

CREATE TABLE FLIGHT_CHOCK_OP (
    FLID text NOT NULL,
    ORDINAL integer NOT NULL CHECK (ORDINAL >= 1),
    SOURCE_SEQ text,
    CHTM text,
    CHTM_TS timestamptz,
    CHID text,
    CHST text,
    CONSTRAINT FLIGHT_CHOCK_OP_PK PRIMARY KEY (FLID, ORDINAL),
    CONSTRAINT FLIGHT_CHOCK_OP_FK FOREIGN KEY (FLID) REFERENCES FLIGHT_SCHD (FLID) ON DELETE CASCADE
);

CREATE TABLE FLIGHT_ROUTE_POINT (
    FLID text NOT NULL,
    ROUTE_KIND text NOT NULL,
    ORDINAL integer NOT NULL CHECK (ORDINAL >= 1),
    SOURCE_SEQ text,
    APCD text,
    SCAT text,
    SCAT_TS timestamptz,
    SCDT text,
    SCDT_TS timestamptz,
    SADC text,
    SDDC text,
    CONSTRAINT FLIGHT_ROUTE_POINT_PK PRIMARY KEY (FLID, ROUTE_KIND, ORDINAL),
    CONSTRAINT FLIGHT_ROUTE_POINT_FK FOREIGN KEY (FLID) REFERENCES FLIGHT_SCHD (FLID) ON DELETE CASCADE,
    CONSTRAINT FLIGHT_ROUTE_POINT_KIND_CK CHECK (ROUTE_KIND IN ('ROUT', 'ERUT'))
);

CREATE TABLE PROC_STATE (
    MESSAGE_ID bigint NOT NULL,
    IDENTITY_KEY text,
    PAYLOAD_DIGEST text,
    MSG_TYPE text,
    MSG_STYP text,
    STATUS text NOT NULL CHECK (STATUS IN ('SUCCEEDED', 'DUPLICATE', 'IGNORED', 'DEAD')),
    REASON text,
    ATTEMPTS integer NOT NULL DEFAULT 0,
    RECEIVED_AT timestamptz,
    PROCESSED_AT timestamptz NOT NULL,
    DTTM timestamptz,
    BACKFILL_STATUS text NOT NULL DEFAULT 'PENDING',
    BACKFILL_AT timestamptz,
    BACKFILL_ATTEMPTS integer NOT NULL DEFAULT 0,
    BACKFILL_ERROR text,
    SUBSYSTEM_NAME text,
    SUBSYSTEM_TYPE text,
    SUBSYSTEM_SUBTYPE text,
    SUBSYSTEM_SEQUENCE bigint,
    SUBSYSTEM_DATE_SENT timestamp,
    CONSTRAINT PROC_STATE_PK PRIMARY KEY (MESSAGE_ID)
);

CREATE INDEX PROC_STATE_IDENTITY_IX ON PROC_STATE (IDENTITY_KEY, PAYLOAD_DIGEST, DTTM);

CREATE INDEX PROC_STATE_BACKFILL_IX ON PROC_STATE (MESSAGE_ID) WHERE BACKFILL_STATUS = 'PENDING';

CREATE TABLE MSG_EVENT (
    EVENT_ID bigint GENERATED ALWAYS AS IDENTITY,
    TOPIC text NOT NULL,
    EVENT_KEY text NOT NULL,
    PAYLOAD text,
    FLID text NOT NULL,
    STATE_VERSION bigint NOT NULL,
    KIND text NOT NULL CHECK (KIND IN ('SNAPSHOT', 'TOMBSTONE', 'NOTIFY')),
    MESSAGE_ID bigint,
    CREATED_AT timestamptz NOT NULL DEFAULT now(),
    DISPATCHED_AT timestamptz,
    CONSTRAINT MSG_EVENT_PK PRIMARY KEY (EVENT_ID)
);

CREATE INDEX MSG_EVENT_UNDISPATCHED_IX ON MSG_EVENT (EVENT_ID) WHERE DISPATCHED_AT IS NULL;

CREATE TABLE INBOX_CURSOR (
    INBOX_NAME text NOT NULL,
    LAST_MESSAGE_ID bigint NOT NULL,
    UPDATED_AT timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT INBOX_CURSOR_PK PRIMARY KEY (INBOX_NAME)
);

CREATE TABLE SCHD_SNAP_LOG (
    SNAP_ID bigint GENERATED ALWAYS AS IDENTITY,
    MESSAGE_ID bigint NOT NULL,
    STYP text NOT NULL,
    RECORD_COUNT integer NOT NULL,
    FLIDS text NOT NULL,
    OPERATION_DAYS text NOT NULL,
    CREATED_AT timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT SCHD_SNAP_LOG_PK PRIMARY KEY (SNAP_ID)
);

CREATE TABLE PIPELINE_LOCK (
    LOCK_NAME text NOT NULL,
    EPOCH bigint NOT NULL DEFAULT 0,
    HOLDER text,
    LEASE_EXPIRES_AT timestamptz,
    UPDATED_AT timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT PIPELINE_LOCK_PK PRIMARY KEY (LOCK_NAME)
);

INSERT INTO PIPELINE_LOCK (LOCK_NAME, EPOCH) VALUES ('pipeline', 0);
