-- Savepoints: ROLLBACK TO takes back the rows changed since, keeps the
-- savepoint, and opens a failed block again; RELEASE keeps the changes.
CREATE TABLE sp_t (id int PRIMARY KEY, v text NOT NULL, n int);
INSERT INTO sp_t SELECT g, 'r' || g, g * 10 FROM generate_series(1, 20) g;
CREATE INDEX sp_t_n ON sp_t (n);
-- Outside a block.
SAVEPOINT a;
RELEASE a;
ROLLBACK TO a;
-- Inserts, updates (in place and of the key) and deletes taken back.
BEGIN;
UPDATE sp_t SET v = 'before' WHERE id = 1;
SAVEPOINT a;
INSERT INTO sp_t VALUES (21, 'new', 210), (22, 'new', 220);
UPDATE sp_t SET v = 'changed' WHERE id = 1;
UPDATE sp_t SET v = 'twice' WHERE id = 1;
UPDATE sp_t SET id = 102, n = 1020 WHERE id = 2;
DELETE FROM sp_t WHERE id BETWEEN 3 AND 5;
SELECT count(*), sum(id), sum(n) FROM sp_t;
ROLLBACK TO SAVEPOINT a;
SELECT count(*), sum(id), sum(n) FROM sp_t;
SELECT * FROM sp_t WHERE id IN (1, 2, 3, 21, 102) ORDER BY id;
SELECT id FROM sp_t WHERE n IN (20, 1020, 210) ORDER BY id;
-- The savepoint stays: a second rollback to it.
INSERT INTO sp_t VALUES (21, 'again', 210);
ROLLBACK TO a;
-- A key taken back is free again.
INSERT INTO sp_t VALUES (21, 'kept', 211);
COMMIT;
SELECT * FROM sp_t WHERE id IN (1, 2, 21, 22, 102) ORDER BY id;
SELECT count(*), sum(n) FROM sp_t;
-- A failed statement: the block is failed until ROLLBACK TO.
BEGIN;
INSERT INTO sp_t VALUES (30, 'x', 300);
SAVEPOINT s1;
INSERT INTO sp_t VALUES (31, 'y', 310);
INSERT INTO sp_t VALUES (1, 'duplicate', 0);
SELECT 1;
RELEASE s1;
SAVEPOINT s2;
ROLLBACK TO s1;
SELECT id, v FROM sp_t WHERE id >= 30 ORDER BY id;
-- An UPDATE that fails part way through its rows.
SAVEPOINT s2;
UPDATE sp_t SET n = 100 / (id - 10);
ROLLBACK TO s2;
SELECT count(*), sum(n) FROM sp_t;
UPDATE sp_t SET n = n + 1 WHERE id = 30;
COMMIT;
SELECT id, v, n FROM sp_t WHERE id >= 30 ORDER BY id;
-- Nested savepoints, one name used twice, RELEASE.
BEGIN;
SAVEPOINT p;
INSERT INTO sp_t VALUES (40, 'p1', 400);
SAVEPOINT q;
INSERT INTO sp_t VALUES (41, 'q', 410);
SAVEPOINT p;
INSERT INTO sp_t VALUES (42, 'p2', 420);
ROLLBACK TO p;
SELECT id FROM sp_t WHERE id >= 40 ORDER BY id;
RELEASE p;
SAVEPOINT r;
DELETE FROM sp_t WHERE id = 40;
RELEASE q;
ROLLBACK TO r;
ROLLBACK TO p;
SELECT id FROM sp_t WHERE id >= 40 ORDER BY id;
INSERT INTO sp_t VALUES (43, 'after', 430);
COMMIT;
SELECT id, v FROM sp_t WHERE id >= 40 ORDER BY id;
-- A missing savepoint fails the block; ROLLBACK ends it.
BEGIN;
INSERT INTO sp_t VALUES (50, 'gone', 500);
ROLLBACK TO nosuch;
SELECT 1;
COMMIT;
SELECT count(*) FROM sp_t WHERE id = 50;
-- COPY into a table, taken back.
BEGIN;
SAVEPOINT c;
COPY sp_t FROM STDIN;
60	c60	600
61	c61	610
\.
SELECT count(*) FROM sp_t WHERE id >= 60;
ROLLBACK TO c;
COMMIT;
SELECT count(*) FROM sp_t WHERE id >= 60;
-- psql's ON_ERROR_ROLLBACK: a savepoint around each statement.
\set ON_ERROR_ROLLBACK on
BEGIN;
INSERT INTO sp_t VALUES (70, 'one', 700);
INSERT INTO sp_t VALUES (70, 'dup', 700);
INSERT INTO sp_t VALUES (71, 'two', 710);
COMMIT;
\set ON_ERROR_ROLLBACK off
SELECT id, v FROM sp_t WHERE id >= 70 ORDER BY id;
SELECT count(*), sum(id), sum(n) FROM sp_t;
DROP TABLE sp_t;
