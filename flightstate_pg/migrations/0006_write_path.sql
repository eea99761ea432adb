-- flightstate PostgreSQL schema, version 0006: cheaper writes on the hot path.
-- No row changes (docs/design.md, "Migrations"): one index that nothing reads, a storage setting and the
-- compression method of new outbox payloads. Existing rows stay as they are.
-- depends: 0005_runner_tables
--
-- MSG_EVENT_UNDISPATCHED_IX served the pre-0004 dispatcher (DISPATCHED_AT IS NULL). The
-- watermark dispatcher never reads it, yet every event insert paid for it; this is the
-- contract step 0004 announced. Its rollback recreates it.
DROP INDEX MSG_EVENT_UNDISPATCHED_IX;

-- A FLOP rewrites a flight's main row without touching an indexed column; free space on
-- the page lets PostgreSQL keep the new version there (a HOT update: no index writes).
-- Applies to pages written from now on.
ALTER TABLE FLIGHT_SCHD SET (fillfactor = 80);

-- Snapshot payloads are ~2-3 KB of JSON, just over the TOAST threshold, so every insert
-- compresses one; lz4 does it several times faster than the default pglz. A server built
-- without lz4 keeps pglz (EXECUTE: the statement is parsed only here, inside the guard).
DO $guard$
BEGIN
    EXECUTE 'ALTER TABLE MSG_EVENT ALTER COLUMN PAYLOAD SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported OR syntax_error THEN
    RAISE NOTICE 'lz4 unavailable: MSG_EVENT.PAYLOAD keeps the default compression';
END
$guard$;
