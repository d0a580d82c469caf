-- DROP INDEX: the index goes, its table stays and is written without it
CREATE TABLE di (id int PRIMARY KEY, a int, b text);
CREATE INDEX di_a ON di (a);
CREATE UNIQUE INDEX di_b ON di (b);
INSERT INTO di VALUES (1, 10, 'x'), (2, 20, 'y');
INSERT INTO di VALUES (3, 30, 'x');
DROP INDEX di_b;
INSERT INTO di VALUES (3, 30, 'x');
SELECT * FROM di ORDER BY id;
DROP INDEX IF EXISTS di_b;
DROP INDEX di_b;
DROP INDEX di_a, di_nosuch;
DROP INDEX di_a;
SELECT * FROM di WHERE a = 20;
-- in a block that rolls back, the index stays
BEGIN;
CREATE UNIQUE INDEX di_b ON di (id, b);
COMMIT;
BEGIN;
DROP INDEX di_b;
ROLLBACK;
SELECT count(*) FROM di;
-- errors
DROP INDEX di;
DROP INDEX di_pkey;
DROP INDEX public.di_b;
DROP TABLE di;
DROP INDEX di_b;
-- TRUNCATE keeps a table's indexes.
CREATE TABLE tr (id int PRIMARY KEY, v int);
CREATE UNIQUE INDEX tr_v ON tr (v);
INSERT INTO tr VALUES (1, 10), (2, 20);
BEGIN;
TRUNCATE tr;
SELECT count(*) FROM tr;
ROLLBACK;
SELECT * FROM tr ORDER BY id;
TRUNCATE tr;
INSERT INTO tr VALUES (3, 10);
INSERT INTO tr VALUES (4, 10);
SELECT * FROM tr WHERE v = 10;
SELECT c.relname, i.indisunique FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid WHERE t.relname = 'tr' ORDER BY 1;
DROP TABLE tr;
