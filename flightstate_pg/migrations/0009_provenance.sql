-- flightstate PostgreSQL schema, version 0009: per-key provenance of each flight
-- (docs/design.md, "Late rows and provenance"). Additive only (docs/design.md, "Migrations"): one nullable
-- column on the current and the history table, no row rewritten.
-- depends: 0008_outbox_parked
--
-- PROVENANCE: a JSON object, key -> the highest inbox message id that set or cleared it
-- (scalar code, document code, collection code, CODE:seq, "state"), written with the
-- flight in the same transaction. NULL (every flight written before 0009) reads as "no key
-- newer than any message". Plain text, not jsonb: the pump writes it on every save and
-- only reads it back into Python, so the server never parses it.
ALTER TABLE FLIGHT_SCHD ADD COLUMN PROVENANCE text;
ALTER TABLE FLIGHT_SCHD_HIST ADD COLUMN PROVENANCE text;
