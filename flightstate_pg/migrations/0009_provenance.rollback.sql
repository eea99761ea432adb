-- Rollback of 0009_provenance: the pump before 0009 neither reads nor writes it; late rows
-- are then applied against the current state again (docs/design.md, "Late rows and
-- provenance").
ALTER TABLE FLIGHT_SCHD_HIST DROP COLUMN PROVENANCE;
ALTER TABLE FLIGHT_SCHD DROP COLUMN PROVENANCE;
