-- flightstate Oracle 11g schema, 0009_provenance (was 0007.provenance), as flightstate_pg:
-- per-key provenance of each flight (docs/design.md, "Late rows and provenance").
-- Additive only (docs/design.md, "Migrations"): one nullable CLOB on the current and the history table.
-- PROVENANCE: a JSON object, key -> the highest inbox message id that set or cleared it,
-- written with the flight in the same transaction; NULL (every flight written before
-- 0007) reads as "no key newer than any message".
-- depends: 0008_outbox_parked

-- step
ALTER TABLE FLIGHT_SCHD ADD (PROVENANCE CLOB);
-- undo
ALTER TABLE FLIGHT_SCHD DROP COLUMN PROVENANCE;

-- step
ALTER TABLE FLIGHT_SCHD_HIST ADD (PROVENANCE CLOB);
-- undo
ALTER TABLE FLIGHT_SCHD_HIST DROP COLUMN PROVENANCE;
