-- Rollback of 0006_write_path: the default compression for new payloads, the default
-- fillfactor, and the pre-0004 dispatcher's index (rows written since 0004 have
-- DISPATCHED_AT NULL; the rollback of 0004 marks them before that dispatcher returns).
DO $guard$
BEGIN
    EXECUTE 'ALTER TABLE MSG_EVENT ALTER COLUMN PAYLOAD SET COMPRESSION default';
EXCEPTION WHEN feature_not_supported OR syntax_error THEN
    NULL;
END
$guard$;
ALTER TABLE FLIGHT_SCHD RESET (fillfactor);
CREATE INDEX MSG_EVENT_UNDISPATCHED_IX ON MSG_EVENT (EVENT_ID) WHERE DISPATCHED_AT IS NULL;
