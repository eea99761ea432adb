-- Undo 0005_runner_tables: the runner's heartbeat and requeue audit are lost (`status` then
-- shows no runner until `flightstate migrate` runs again).
DROP TABLE RUNNER_REQUEUE PURGE;
DROP SEQUENCE RUNNER_REQUEUE_SEQ;
DROP TABLE RUNNER_HEARTBEAT PURGE;
