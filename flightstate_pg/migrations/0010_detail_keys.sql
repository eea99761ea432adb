-- flightstate PostgreSQL schema, version 0010: the detail tables keep their FLID without a
-- foreign key to FLIGHT_SCHD (docs/design.md, "One write plan, two thin writers").
-- depends: 0009_provenance
--
-- Why: a foreign key checks every inserted detail row with a per-row trigger, queued and
-- run at the end of the statement. A schedule package rewrites every changed collection of
-- every flight it carries (14,000 detail rows for 2,000 flights), and those checks were
-- more than half of its write time. They prove nothing the writer does not already hold:
-- the detail rows of a flight are written only in the transaction that upserts its main
-- row under the pipeline lock, and lifecycle cleanup deletes a flight's details before its
-- main row. The tests check that no detail row is ever left without its flight.
-- Dropping a constraint rewrites no row and is instant (docs/design.md, "Migrations").
ALTER TABLE FLIGHT_GATE DROP CONSTRAINT FLIGHT_GATE_FK;
ALTER TABLE FLIGHT_CHECKIN DROP CONSTRAINT FLIGHT_CHECKIN_FK;
ALTER TABLE FLIGHT_BELT DROP CONSTRAINT FLIGHT_BELT_FK;
ALTER TABLE FLIGHT_STAND_PLAN DROP CONSTRAINT FLIGHT_STAND_PLAN_FK;
ALTER TABLE FLIGHT_CHUTE DROP CONSTRAINT FLIGHT_CHUTE_FK;
ALTER TABLE FLIGHT_DELAY DROP CONSTRAINT FLIGHT_DELAY_FK;
ALTER TABLE FLIGHT_BRIDGE_OP DROP CONSTRAINT FLIGHT_BRIDGE_OP_FK;
ALTER TABLE FLIGHT_CHOCK_OP DROP CONSTRAINT FLIGHT_CHOCK_OP_FK;
ALTER TABLE FLIGHT_ROUTE_POINT DROP CONSTRAINT FLIGHT_ROUTE_POINT_FK;
