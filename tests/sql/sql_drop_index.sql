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
