-- CHECK constraints: made by CREATE TABLE and ALTER TABLE, named as
-- PostgreSQL names them, run on INSERT, UPDATE, ON CONFLICT and COPY,
-- carried through ALTER TABLE and TRUNCATE, shown by \d, pg_constraint
-- and information_schema, with the answers PostgreSQL 15 gives.
CREATE TABLE ck (id int PRIMARY KEY, qty int CHECK (qty >= 0), lo int, hi int,
    name text CONSTRAINT name_len CHECK (length(name) < 5),
    CHECK (lo <= hi), CHECK (hi < 100 AND lo > 0));
\d ck
INSERT INTO ck VALUES (1, 5, 1, 2, 'ab');
INSERT INTO ck VALUES (2, -1, 1, 2, 'ab');
INSERT INTO ck VALUES (3, 1, 3, 2, 'ab');
INSERT INTO ck VALUES (4, 1, 1, 2, 'abcdef');
INSERT INTO ck VALUES (5, 1, 1, 200, 'x');
INSERT INTO ck VALUES (6, NULL, NULL, 2, NULL) RETURNING *;
INSERT INTO ck (id, lo, hi) SELECT 7, 5, 4;
UPDATE ck SET qty = -5 WHERE id = 1;
UPDATE ck SET qty = qty + 1 RETURNING id, qty;
INSERT INTO ck VALUES (1, 1, 1, 2, 'ok') ON CONFLICT (id) DO UPDATE SET qty = -1;
INSERT INTO ck VALUES (1, 1, 1, 2, 'ok') ON CONFLICT (id) DO UPDATE SET qty = 9 RETURNING *;
COPY ck FROM STDIN;
9	-3	1	1	x
\.
COPY ck FROM STDIN;
9	3	1	1	x
\.
SELECT * FROM ck ORDER BY id;
SELECT conname, contype, pg_get_constraintdef(oid, true) FROM pg_constraint
    WHERE conrelid = 'ck'::regclass ORDER BY conname;
SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint
    WHERE conrelid = 'ck'::regclass AND conname IN ('ck_check', 'ck_qty_check', 'name_len') ORDER BY conname;
SELECT relname, relchecks FROM pg_class WHERE relname = 'ck';
SELECT * FROM information_schema.check_constraints
    WHERE constraint_name IN ('ck_check', 'ck_qty_check', 'name_len') ORDER BY constraint_name;
-- a transaction's failed row leaves the rest as it was
BEGIN;
INSERT INTO ck VALUES (10, 1, 1, 2, 'a');
INSERT INTO ck VALUES (11, -1, 1, 2, 'a');
ROLLBACK;
SELECT count(*) FROM ck;
-- ALTER TABLE: added (each row checked), dropped, carried with renames
ALTER TABLE ck ADD CONSTRAINT qty_small CHECK (qty < 10);
ALTER TABLE ck ADD CHECK (id > 100);
ALTER TABLE ck ADD CHECK (id < 100);
INSERT INTO ck VALUES (200, 1, 1, 2, 'a');
INSERT INTO ck VALUES (20, 10, 1, 2, 'a');
ALTER TABLE ck DROP CONSTRAINT qty_small;
INSERT INTO ck VALUES (20, 10, 1, 2, 'a');
ALTER TABLE ck DROP CONSTRAINT nope;
ALTER TABLE ck DROP CONSTRAINT IF EXISTS nope;
ALTER TABLE ck RENAME COLUMN qty TO quantity;
ALTER TABLE ck ADD COLUMN extra int;
ALTER TABLE ck DROP COLUMN name;
\d ck
INSERT INTO ck (id, quantity, lo, hi) VALUES (21, -1, 1, 2);
INSERT INTO ck (id, quantity, lo, hi) VALUES (21, 1, 1, 2) RETURNING *;
ALTER TABLE ck ALTER COLUMN quantity TYPE bigint;
INSERT INTO ck (id, quantity, lo, hi) VALUES (22, -1, 1, 2);
-- TRUNCATE keeps them
TRUNCATE ck;
INSERT INTO ck (id, quantity, lo, hi) VALUES (1, -1, 1, 2);
INSERT INTO ck (id, quantity, lo, hi) VALUES (1, 1, 1, 2);
SELECT count(*) FROM ck;
-- errors
CREATE TABLE ck_bad (a int CHECK (a > (SELECT 1)));
CREATE TABLE ck_bad (a int CHECK (sum(a) > 0));
CREATE TABLE ck_bad (a int CHECK (a));
CREATE TABLE ck_bad (a int CHECK (b > 0));
CREATE TABLE ck_bad (a int CONSTRAINT c1 CHECK (a > 0), b int CONSTRAINT c1 CHECK (b > 0));
CREATE TABLE ck_bad (a int PRIMARY KEY CHECK (a > 0), CONSTRAINT ck_bad_pkey CHECK (a < 5));
CREATE TABLE ck_ok (a int CHECK (a > 0), b int CHECK (a < b), c text CHECK (length(c) < 4 AND length(c) > 0));
\d ck_ok
DROP TABLE ck, ck_ok, ck_bad;
SELECT count(*) FROM pg_constraint WHERE contype = 'c' AND conrelid <> 0;
