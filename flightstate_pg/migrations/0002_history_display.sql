-- flightstate PostgreSQL schema, version 0002: look-up indexes, history twins, display view.
-- Additive only: no column of 0001 is dropped or rewritten (docs/design.md, "Migrations").
-- depends: 0001_core

CREATE INDEX FLIGHT_SCHD_MAID_IX ON FLIGHT_SCHD (MAID, FLID);

CREATE INDEX FLIGHT_SCHD_OPDAY_IX ON FLIGHT_SCHD (OPERATION_DAY, FLID);

CREATE INDEX FLIGHT_SCHD_SODT_IX ON FLIGHT_SCHD (SODT_TS);

CREATE INDEX F_GATE_GATE_IX ON FLIGHT_GATE (GATE, FLID);

CREATE INDEX F_CHECKIN_CHKC_IX ON FLIGHT_CHECKIN (CHKC, FLID);

CREATE INDEX F_BELT_BELT_IX ON FLIGHT_BELT (BELT, FLID);

CREATE INDEX F_STAND_PLAN_PSST_IX ON FLIGHT_STAND_PLAN (PSST, FLID);

CREATE INDEX F_CHUTE_CHUT_IX ON FLIGHT_CHUTE (CHUT, FLID);

CREATE INDEX F_BRIDGE_OP_ABDG_IX ON FLIGHT_BRIDGE_OP (ABDG, FLID);

CREATE TABLE FLIGHT_SCHD_HIST (
    FLID text NOT NULL,
    STATE text NOT NULL,
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
    ARCHIVED_AT timestamptz NOT NULL,
    CONSTRAINT FLIGHT_SCHD_HIST_PK PRIMARY KEY (FLID, ARCHIVED_AT)
);

CREATE TABLE FLIGHT_GATE_HIST (
    FLID text NOT NULL,
    ORDINAL integer NOT NULL,
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
    ARCHIVED_AT timestamptz NOT NULL,
    CONSTRAINT FLIGHT_GATE_HIST_PK PRIMARY KEY (FLID, ARCHIVED_AT, ORDINAL)
);

CREATE TABLE FLIGHT_CHECKIN_HIST (
    FLID text NOT NULL,
    ORDINAL integer NOT NULL,
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
    ARCHIVED_AT timestamptz NOT NULL,
    CONSTRAINT FLIGHT_CHECKIN_HIST_PK PRIMARY KEY (FLID, ARCHIVED_AT, ORDINAL)
);

CREATE TABLE FLIGHT_BELT_HIST (
    FLID text NOT NULL,
    ORDINAL integer NOT NULL,
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
    ARCHIVED_AT timestamptz NOT NULL,
    CONSTRAINT FLIGHT_BELT_HIST_PK PRIMARY KEY (FLID, ARCHIVED_AT, ORDINAL)
);

CREATE TABLE FLIGHT_STAND_PLAN_HIST (
    FLID text NOT NULL,
    ORDINAL integer NOT NULL,
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
    ARCHIVED_AT timestamptz NOT NULL,
    CONSTRAINT FLIGHT_STAND_PLAN_HIST_PK PRIMARY KEY (FLID, ARCHIVED_AT, ORDINAL)
);

CREATE TABLE FLIGHT_CHUTE_HIST (
    FLID text NOT NULL,
    ORDINAL integer NOT NULL,
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
    ARCHIVED_AT timestamptz NOT NULL,
    CONSTRAINT FLIGHT_CHUTE_HIST_PK PRIMARY KEY (FLID, ARCHIVED_AT, ORDINAL)
);

CREATE TABLE FLIGHT_DELAY_HIST (
    FLID text NOT NULL,
    ORDINAL integer NOT NULL,
    SOURCE_SEQ text,
    CODE text,
    STRT text,
    STRT_TS timestamptz,
    DURA text,
    DURA_MIN integer,
    DLTX text,
    ARCHIVED_AT timestamptz NOT NULL,
    CONSTRAINT FLIGHT_DELAY_HIST_PK PRIMARY KEY (FLID, ARCHIVED_AT, ORDINAL)
);

CREATE TABLE FLIGHT_BRIDGE_OP_HIST (
    FLID text NOT NULL,
    ORDINAL integer NOT NULL,
    SOURCE_SEQ text,
    ABDG text,
    ABOP text,
    AOTM text,
    AOTM_TS timestamptz,
    ARCHIVED_AT timestamptz NOT NULL,
    CONSTRAINT FLIGHT_BRIDGE_OP_HIST_PK PRIMARY KEY (FLID, ARCHIVED_AT, ORDINAL)
);

CREATE TABLE FLIGHT_CHOCK_OP_HIST (
    FLID text NOT NULL,
    ORDINAL integer NOT NULL,
    SOURCE_SEQ text,
    CHTM text,
    CHTM_TS timestamptz,
    CHID text,
    CHST text,
    ARCHIVED_AT timestamptz NOT NULL,
    CONSTRAINT FLIGHT_CHOCK_OP_HIST_PK PRIMARY KEY (FLID, ARCHIVED_AT, ORDINAL)
);

CREATE TABLE FLIGHT_ROUTE_POINT_HIST (
    FLID text NOT NULL,
    ROUTE_KIND text NOT NULL,
    ORDINAL integer NOT NULL,
    SOURCE_SEQ text,
    APCD text,
    SCAT text,
    SCAT_TS timestamptz,
    SCDT text,
    SCDT_TS timestamptz,
    SADC text,
    SDDC text,
    ARCHIVED_AT timestamptz NOT NULL,
    CONSTRAINT FLIGHT_ROUTE_POINT_HIST_PK PRIMARY KEY (FLID, ARCHIVED_AT, ROUTE_KIND, ORDINAL)
);

CREATE VIEW FLIGHT_SCHD_DISPLAY AS
SELECT
    f.*,
    (SELECT d.GATE FROM FLIGHT_GATE d WHERE d.FLID = f.FLID AND d.ORDINAL = 1) AS GATE_1,
    (SELECT d.GATE FROM FLIGHT_GATE d WHERE d.FLID = f.FLID AND d.ORDINAL = 2) AS GATE_2,
    (SELECT COUNT(*) FROM FLIGHT_GATE d WHERE d.FLID = f.FLID) AS GATE_COUNT,
    (SELECT d.CHKC FROM FLIGHT_CHECKIN d WHERE d.FLID = f.FLID AND d.ORDINAL = 1) AS COUNTER_1,
    (SELECT d.CHKC FROM FLIGHT_CHECKIN d WHERE d.FLID = f.FLID AND d.ORDINAL = 2) AS COUNTER_2,
    (SELECT COUNT(*) FROM FLIGHT_CHECKIN d WHERE d.FLID = f.FLID) AS COUNTER_COUNT,
    (SELECT d.BELT FROM FLIGHT_BELT d WHERE d.FLID = f.FLID AND d.ORDINAL = 1) AS BELT_1,
    (SELECT d.BELT FROM FLIGHT_BELT d WHERE d.FLID = f.FLID AND d.ORDINAL = 2) AS BELT_2,
    (SELECT COUNT(*) FROM FLIGHT_BELT d WHERE d.FLID = f.FLID) AS BELT_COUNT
FROM FLIGHT_SCHD f;
