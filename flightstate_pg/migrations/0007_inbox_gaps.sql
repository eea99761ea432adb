-- flightstate PostgreSQL schema, version 0007: gap-aware inbox reading (docs/design.md,
-- "Gaps in the inbox ids"). Additive only (docs/design.md, "Migrations"): one new table and three columns
-- with defaults (no row is rewritten: PostgreSQL 11+ stores a constant default in the
-- catalog).
-- depends: 0006_write_path
--
-- INBOX_GAP: the open gaps of an inbox, ids LOW_ID..HIGH_ID (inclusive) missing below its
-- cursor since FIRST_SEEN_AT. Written in the transaction of the batch that went past them
-- (and of the late row that fills one), so a crash neither forgets a gap nor applies a
-- late row twice. Few rows: each is closed after the horizon at the latest.
CREATE TABLE INBOX_GAP (
    INBOX_NAME text NOT NULL,
    LOW_ID bigint NOT NULL,
    HIGH_ID bigint NOT NULL,
    FIRST_SEEN_AT timestamptz NOT NULL,
    CONSTRAINT INBOX_GAP_PK PRIMARY KEY (INBOX_NAME, LOW_ID),
    CONSTRAINT INBOX_GAP_RANGE_CK CHECK (LOW_ID <= HIGH_ID)
);

-- Counters beside the cursor, for `status` (late rows applied, gaps abandoned, ever).
ALTER TABLE INBOX_CURSOR
    ADD COLUMN LATE_ROWS bigint NOT NULL DEFAULT 0,
    ADD COLUMN GAPS_ABANDONED bigint NOT NULL DEFAULT 0;

-- A message applied after the pump had gone past its id.
ALTER TABLE PROC_STATE ADD COLUMN LATE boolean NOT NULL DEFAULT false;
