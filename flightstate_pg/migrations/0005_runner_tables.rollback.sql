-- Rollback of 0005_runner_tables: the runner's heartbeat and requeue audit.
DROP TABLE RUNNER_REQUEUE;
DROP TABLE RUNNER_HEARTBEAT;
