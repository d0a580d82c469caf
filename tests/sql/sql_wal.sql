-- The log as SQL sees it: CHECKPOINT, and the counters of keel_stat_wal
-- and pg_stat_wal, compared with earlier readings (their values depend on
-- everything the database did before).
CHECKPOINT;
-- The columns, and their types as arithmetic shows them: wal_bytes is
-- numeric (its division keeps 20 digits), the times double precision,
-- stats_reset a timestamptz (printed with its zone).
SELECT * FROM pg_stat_wal WHERE false;
SELECT * FROM keel_stat_wal WHERE false;
SELECT (wal_bytes - wal_bytes + 1) / 3 AS numeric, (wal_write_time + 1) / 3 AS float8, (wal_records - wal_records + 1) / 3 AS bigint, stats_reset::text LIKE '%+00' AS timestamptz FROM pg_stat_wal;
SELECT wal_records > 0 AS records, wal_bytes > 0 AS bytes, wal_write > 0 AS writes, wal_sync > 0 AS syncs, wal_write_time, wal_sync_time, stats_reset <= now() AS reset_before_now FROM pg_stat_wal;
SELECT w.wal_records = k.wal_records AND w.wal_fpi = k.wal_fpi AS same, k.fpi_bytes >= 0 AS fpi_bytes, k.insert_lsn > k.wal_bytes AS lsn FROM pg_stat_wal w, keel_stat_wal k;
CREATE TABLE wal_t (id int PRIMARY KEY, v text);
INSERT INTO wal_t VALUES (1, 'one');
-- After a checkpoint, the first change of a page logs it whole.
CHECKPOINT;
SELECT wal_records AS r0, wal_fpi AS f0, fpi_bytes AS fb0, wal_bytes AS b0, insert_lsn AS l0, wal_sync AS s0 FROM keel_stat_wal \gset
INSERT INTO wal_t SELECT g, 'row ' || g FROM generate_series(2, 200) g;
SELECT wal_records > :r0 AS records, wal_fpi > :f0 AS images, fpi_bytes > :fb0 AS image_bytes, wal_bytes > :b0 AS bytes, insert_lsn - :l0 = wal_bytes - :b0 AS lsn_moved_by_bytes, wal_sync > :s0 AS synced FROM keel_stat_wal;
-- A second change of the same pages logs no image.
SELECT wal_fpi AS f1, wal_records AS r1 FROM keel_stat_wal \gset
UPDATE wal_t SET v = 'x' WHERE id = 100;
SELECT wal_fpi = :f1 AS no_image, wal_records > :r1 AS records FROM keel_stat_wal;
-- CHECKPOINT inside a transaction block, as PostgreSQL allows.
BEGIN;
CHECKPOINT;
COMMIT;
-- Only a superuser may (42501 for another role).
CREATE ROLE regress_wal_user LOGIN NOSUPERUSER;
\c - regress_wal_user
\set VERBOSITY sqlstate
CHECKPOINT;
\set VERBOSITY default
CHECKPOINT;
SELECT wal_records > 0 AS records FROM pg_stat_wal;
\c - keel
DROP ROLE regress_wal_user;
DROP TABLE wal_t;
