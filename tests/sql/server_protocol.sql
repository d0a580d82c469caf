-- The protocol with the statements every SQL session has: a Query per
-- statement and several in one Query (psql's \;), results, errors with
-- their SQLSTATE and position, transaction blocks and the failed state
-- (25P02), settings, and queries that hold no statement.
SELECT 1;
SELECT 1 AS a, 'two' AS b, NULL AS c;
SELECT 1 AS first \; SELECT 2 AS second;
BEGIN \; SELECT 3 AS in_block \; COMMIT;
-- A syntax error anywhere in a Query runs none of its statements.
SELECT 4 AS never \; SELEC 5 \; SELECT 6 AS never;
SELEC 1;
\echo :SQLSTATE
\set VERBOSITY sqlstate
SELECT 1 +;
\set VERBOSITY default
-- A failing statement in a block: everything but ROLLBACK is refused.
BEGIN;
SELECT 7 AS in_block;
SELEC 8;
SELECT 9 AS refused;
\echo :SQLSTATE
ROLLBACK;
SELECT 10 AS after_rollback;
-- A failed block ended by COMMIT rolls back.
BEGIN;
SELEC;
COMMIT;
-- Settings.
SHOW client_encoding;
SET application_name = 'keel_regress';
SHOW application_name;
RESET application_name;
-- keel serve's pool is PostgreSQL's default shared_buffers, and fixed.
SHOW shared_buffers;
SET shared_buffers = '1GB';
-- Queries without a statement (EmptyQueryResponse).
;
SELECT 11 AS after_empty \; ;
