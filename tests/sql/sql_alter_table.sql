-- ALTER TABLE: columns added, dropped, changed; tables and columns renamed
CREATE TABLE at1 (id int PRIMARY KEY, name text NOT NULL, qty int DEFAULT 1);
CREATE INDEX at1_name_idx ON at1 (name);
INSERT INTO at1 (id, name) VALUES (1, 'one'), (2, 'two'), (3, 'three');
-- ADD COLUMN: null, or the default for every row there is
ALTER TABLE at1 ADD COLUMN note text;
ALTER TABLE at1 ADD COLUMN price numeric(8,2) DEFAULT 9.50 NOT NULL;
ALTER TABLE at1 ADD made date DEFAULT '2024-01-02';
SELECT * FROM at1 ORDER BY id;
INSERT INTO at1 (id, name) VALUES (4, 'four') RETURNING *;
\d at1
ALTER TABLE at1 ADD COLUMN IF NOT EXISTS note int;
ALTER TABLE at1 ADD COLUMN note int;
ALTER TABLE at1 ADD COLUMN must int NOT NULL;
ALTER TABLE at1 ADD COLUMN bad int DEFAULT 'x';
-- a SERIAL column numbers the rows there are
ALTER TABLE at1 ADD COLUMN seq serial;
SELECT id, seq FROM at1 ORDER BY id;
INSERT INTO at1 (id, name) VALUES (5, 'five') RETURNING id, seq;
-- several commands in one statement, in order
ALTER TABLE at1 ADD COLUMN a1 int DEFAULT 7, ADD COLUMN a2 text, DROP COLUMN made;
SELECT id, a1, a2 FROM at1 ORDER BY id;
-- DROP COLUMN: its indexes go with it
ALTER TABLE at1 DROP COLUMN name;
ALTER TABLE at1 DROP COLUMN IF EXISTS nosuch;
ALTER TABLE at1 DROP COLUMN nosuch;
ALTER TABLE at1 DROP COLUMN a2, DROP COLUMN seq;
\d at1
-- ALTER COLUMN: defaults, NOT NULL, types
ALTER TABLE at1 ALTER COLUMN note SET DEFAULT 'n/a';
ALTER TABLE at1 ALTER COLUMN qty DROP DEFAULT;
INSERT INTO at1 (id) VALUES (6);
SELECT id, qty, note FROM at1 ORDER BY id;
ALTER TABLE at1 ALTER COLUMN note SET NOT NULL;
UPDATE at1 SET note = 'x' WHERE note IS NULL;
ALTER TABLE at1 ALTER COLUMN note SET NOT NULL;
INSERT INTO at1 (id, note) VALUES (7, NULL);
ALTER TABLE at1 ALTER COLUMN note DROP NOT NULL;
INSERT INTO at1 (id, note) VALUES (7, NULL);
ALTER TABLE at1 ALTER COLUMN id DROP NOT NULL;
ALTER TABLE at1 ALTER COLUMN qty TYPE bigint;
ALTER TABLE at1 ALTER COLUMN price TYPE text USING price::text || ' EUR';
ALTER TABLE at1 ALTER COLUMN a1 SET DATA TYPE numeric(6,1);
ALTER TABLE at1 ALTER COLUMN note TYPE integer;
ALTER TABLE at1 ALTER COLUMN qty TYPE boolean;
SELECT id, qty, pg_typeof(qty), price, a1 FROM at1 ORDER BY id;
\d at1
-- RENAME
ALTER TABLE at1 RENAME COLUMN note TO remark;
ALTER TABLE at1 RENAME qty TO quantity;
ALTER TABLE at1 RENAME COLUMN nosuch TO x;
ALTER TABLE at1 RENAME COLUMN remark TO price;
ALTER TABLE at1 RENAME TO at2;
SELECT * FROM at1;
SELECT id, quantity, remark FROM at2 ORDER BY id;
CREATE TABLE at3 (k int);
ALTER TABLE at2 RENAME TO at3;
ALTER TABLE IF EXISTS nosuch RENAME TO x;
ALTER TABLE IF EXISTS nosuch ADD COLUMN x int;
ALTER TABLE nosuch ADD COLUMN x int;
-- in a transaction: ROLLBACK brings the table back
BEGIN;
ALTER TABLE at2 ADD COLUMN gone int DEFAULT 5;
ALTER TABLE at2 RENAME TO at4;
SELECT count(gone) FROM at4;
ROLLBACK;
SELECT * FROM at4;
SELECT count(*) FROM at2;
\d at2
DROP TABLE at2;
DROP TABLE at3;
