-- Undo 0009_provenance: the pump before it neither reads nor writes it; late rows are
-- then applied against the current state again.
ALTER TABLE FLIGHT_SCHD_HIST DROP COLUMN PROVENANCE;
ALTER TABLE FLIGHT_SCHD DROP COLUMN PROVENANCE;
