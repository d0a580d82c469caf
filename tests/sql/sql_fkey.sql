-- FOREIGN KEY constraints: definitions, checks, actions and catalogs
CREATE TABLE fk_p (id int PRIMARY KEY, name text);
CREATE TABLE fk_c (cid int PRIMARY KEY, pid int REFERENCES fk_p, note text);
INSERT INTO fk_p VALUES (1, 'one'), (2, 'two'), (3, 'three');
INSERT INTO fk_c VALUES (10, 1, 'a'), (11, NULL, 'no parent'), (12, 2, 'b');
-- a key that is not there
INSERT INTO fk_c VALUES (13, 4, 'c');
INSERT INTO fk_c VALUES (13, 1, 'd'), (14, 5, 'e');
SELECT * FROM fk_c ORDER BY cid;
UPDATE fk_c SET pid = 3 WHERE cid = 10;
UPDATE fk_c SET pid = 9 WHERE cid = 10;
UPDATE fk_c SET note = 'kept' WHERE cid = 10;
-- a row still referred to
DELETE FROM fk_p WHERE id = 3;
UPDATE fk_p SET id = 30 WHERE id = 3;
-- NO ACTION: the key is there again at the statement's end
UPDATE fk_p SET id = CASE id WHEN 2 THEN 3 WHEN 3 THEN 2 END WHERE id IN (2, 3);
UPDATE fk_p SET name = 'THREE' WHERE id = 3;
DELETE FROM fk_p WHERE id = 1 RETURNING *;
SELECT * FROM fk_p ORDER BY id;
-- in a transaction
BEGIN;
INSERT INTO fk_p VALUES (7, 'seven');
INSERT INTO fk_c VALUES (70, 7, 'x');
DELETE FROM fk_p WHERE id = 7;
ROLLBACK;
SELECT count(*) FROM fk_c WHERE cid = 70;
BEGIN;
INSERT INTO fk_p VALUES (8, 'eight');
SAVEPOINT s1;
INSERT INTO fk_c VALUES (80, 99, 'bad');
ROLLBACK TO s1;
INSERT INTO fk_c VALUES (80, 8, 'good');
COMMIT;
SELECT * FROM fk_c WHERE cid = 80;
-- COPY checks its rows at its end
COPY fk_c FROM STDIN;
90	8	copied
91	6	missing
\.
COPY fk_c FROM STDIN;
90	8	copied
91	2	there
\.
SELECT count(*) FROM fk_c WHERE cid IN (90, 91);
-- ON CONFLICT DO UPDATE and UPDATE ... FROM
INSERT INTO fk_c VALUES (90, 5, 'x') ON CONFLICT (cid) DO UPDATE SET pid = excluded.pid;
INSERT INTO fk_c VALUES (90, 3, 'x') ON CONFLICT (cid) DO UPDATE SET pid = excluded.pid;
UPDATE fk_c SET pid = v.p FROM (VALUES (91, 77)) v(c, p) WHERE fk_c.cid = v.c;
UPDATE fk_c SET pid = v.p FROM (VALUES (91, 8)) v(c, p) WHERE fk_c.cid = v.c;
SELECT * FROM fk_c ORDER BY cid;

-- several columns, named, to a unique key, MATCH SIMPLE and FULL
CREATE TABLE fk_p2 (a int, b text, c int PRIMARY KEY, UNIQUE (a, b));
INSERT INTO fk_p2 VALUES (1, 'x', 1), (2, 'y', 2);
CREATE TABLE fk_c2 (id int PRIMARY KEY, a int, b text,
  CONSTRAINT ab_ref FOREIGN KEY (b, a) REFERENCES fk_p2 (b, a));
INSERT INTO fk_c2 VALUES (1, 1, 'x'), (2, 2, NULL), (3, NULL, 'zz');
INSERT INTO fk_c2 VALUES (4, 1, 'y');
CREATE TABLE fk_c3 (id int PRIMARY KEY, a int, b text,
  FOREIGN KEY (a, b) REFERENCES fk_p2 (a, b) MATCH FULL);
INSERT INTO fk_c3 VALUES (1, 1, 'x'), (2, NULL, NULL);
INSERT INTO fk_c3 VALUES (3, 2, NULL);
SELECT conname, contype, confupdtype, confdeltype, confmatchtype, conkey, confkey
  FROM pg_constraint WHERE conrelid IN ('fk_c2'::regclass, 'fk_c3'::regclass)
  ORDER BY conname;
SELECT pg_get_constraintdef(oid) FROM pg_constraint
  WHERE conrelid IN ('fk_c2'::regclass, 'fk_c3'::regclass) ORDER BY conname;

-- actions
CREATE TABLE fk_a (id int PRIMARY KEY);
INSERT INTO fk_a SELECT generate_series(1, 6);
CREATE TABLE fk_casc (id int PRIMARY KEY,
  aid int REFERENCES fk_a ON DELETE CASCADE ON UPDATE CASCADE);
CREATE TABLE fk_grand (id int PRIMARY KEY,
  cid int REFERENCES fk_casc ON DELETE CASCADE);
CREATE TABLE fk_null (id int PRIMARY KEY,
  aid int REFERENCES fk_a ON DELETE SET NULL ON UPDATE SET NULL);
CREATE TABLE fk_def (id int PRIMARY KEY,
  aid int DEFAULT 6 REFERENCES fk_a ON DELETE SET DEFAULT);
CREATE TABLE fk_restrict (id int PRIMARY KEY,
  aid int REFERENCES fk_a ON DELETE RESTRICT ON UPDATE RESTRICT);
INSERT INTO fk_casc VALUES (1, 1), (2, 1), (3, 2);
INSERT INTO fk_grand VALUES (1, 1), (2, 2), (3, 3);
INSERT INTO fk_null VALUES (1, 1), (2, 2);
INSERT INTO fk_def VALUES (1, 1), (2, 3);
INSERT INTO fk_restrict VALUES (1, 4);
SELECT pg_get_constraintdef(oid) FROM pg_constraint
  WHERE conrelid IN ('fk_casc'::regclass, 'fk_null'::regclass,
                     'fk_def'::regclass, 'fk_restrict'::regclass)
  AND contype = 'f' ORDER BY conname;
UPDATE fk_a SET id = 10 WHERE id = 1;
SELECT * FROM fk_casc ORDER BY id;
SELECT * FROM fk_null ORDER BY id;
DELETE FROM fk_a WHERE id = 10;
SELECT * FROM fk_casc ORDER BY id;
SELECT * FROM fk_grand ORDER BY id;
DELETE FROM fk_a WHERE id = 3;
SELECT * FROM fk_def ORDER BY id;
DELETE FROM fk_a WHERE id = 6;
DELETE FROM fk_a WHERE id = 4;
UPDATE fk_a SET id = 40 WHERE id = 4;
DELETE FROM fk_a WHERE id = 2;
SELECT * FROM fk_casc ORDER BY id;
SELECT * FROM fk_grand ORDER BY id;
SELECT * FROM fk_null ORDER BY id;

-- a table that refers to itself
CREATE TABLE fk_tree (id int PRIMARY KEY,
  parent int REFERENCES fk_tree ON DELETE CASCADE);
INSERT INTO fk_tree VALUES (1, NULL), (2, 1), (3, 2), (4, 3), (5, 1), (6, 6);
INSERT INTO fk_tree VALUES (7, 8);
DELETE FROM fk_tree WHERE id = 2;
SELECT * FROM fk_tree ORDER BY id;

-- ALTER TABLE
CREATE TABLE fk_lone (id int PRIMARY KEY, pid int);
INSERT INTO fk_lone VALUES (1, 1), (2, 42);
ALTER TABLE fk_lone ADD FOREIGN KEY (pid) REFERENCES fk_p;
DELETE FROM fk_lone WHERE id = 2;
ALTER TABLE fk_lone ADD CONSTRAINT lone_p FOREIGN KEY (pid) REFERENCES fk_p (id);
ALTER TABLE fk_lone ADD CONSTRAINT lone_p FOREIGN KEY (pid) REFERENCES fk_p (id);
INSERT INTO fk_lone VALUES (3, 42);
ALTER TABLE fk_lone ADD COLUMN extra int DEFAULT 0;
INSERT INTO fk_lone VALUES (3, 42);
ALTER TABLE fk_lone RENAME COLUMN pid TO parent_id;
SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint
  WHERE conrelid = 'fk_lone'::regclass AND contype = 'f';
ALTER TABLE fk_lone DROP CONSTRAINT lone_p;
ALTER TABLE fk_lone DROP CONSTRAINT IF EXISTS lone_p;
INSERT INTO fk_lone VALUES (3, 42);
ALTER TABLE fk_lone DROP CONSTRAINT lone_p;
SELECT count(*) FROM pg_constraint WHERE conrelid = 'fk_lone'::regclass;
ALTER TABLE fk_lone ADD CONSTRAINT lone_p2 FOREIGN KEY (parent_id) REFERENCES fk_p;
DELETE FROM fk_lone WHERE id = 3;
ALTER TABLE fk_lone ADD CONSTRAINT lone_p2 FOREIGN KEY (parent_id) REFERENCES fk_p;
ALTER TABLE fk_lone DROP COLUMN parent_id;
SELECT count(*) FROM pg_constraint WHERE conrelid = 'fk_lone'::regclass AND contype = 'f';

-- definitions refused
CREATE TABLE fk_bad (x int REFERENCES fk_nosuch);
CREATE TABLE fk_nopk (a int, b int);
CREATE TABLE fk_bad (x int REFERENCES fk_nopk);
CREATE TABLE fk_bad (x int REFERENCES fk_nopk (a));
CREATE TABLE fk_bad (x text REFERENCES fk_p);
CREATE TABLE fk_bad (x int REFERENCES fk_p (nosuch));
CREATE TABLE fk_bad (x int, FOREIGN KEY (y) REFERENCES fk_p);
CREATE TABLE fk_bad (x int, y int, FOREIGN KEY (x, y) REFERENCES fk_p);
CREATE TABLE fk_bad (x int, FOREIGN KEY (x) REFERENCES fk_p2 (a));
CREATE TABLE fk_bad (x bigint REFERENCES fk_p, y varchar(5) REFERENCES fk_p2 (b));
CREATE TABLE fk_ok (x bigint REFERENCES fk_p);
INSERT INTO fk_ok VALUES (2), (3);
INSERT INTO fk_ok VALUES (5000000000);

-- DEFERRABLE: checked as the transaction commits
CREATE TABLE fk_dp (id int PRIMARY KEY);
CREATE TABLE fk_dc (id int PRIMARY KEY,
  pid int REFERENCES fk_dp DEFERRABLE INITIALLY DEFERRED);
CREATE TABLE fk_di (id int PRIMARY KEY, pid int,
  CONSTRAINT di_p FOREIGN KEY (pid) REFERENCES fk_dp ON DELETE CASCADE DEFERRABLE);
BEGIN;
INSERT INTO fk_dc VALUES (1, 1);
INSERT INTO fk_dp VALUES (1);
COMMIT;
BEGIN;
INSERT INTO fk_dc VALUES (2, 2);
INSERT INTO fk_dc VALUES (3, 2);
COMMIT;
SELECT count(*) FROM fk_dc;
BEGIN;
INSERT INTO fk_dc VALUES (3, 3);
DELETE FROM fk_dc WHERE id = 3;
COMMIT;
BEGIN;
DELETE FROM fk_dp WHERE id = 1;
INSERT INTO fk_dp VALUES (1);
COMMIT;
BEGIN;
DELETE FROM fk_dp WHERE id = 1;
COMMIT;
BEGIN;
DELETE FROM fk_dp WHERE id = 1;
UPDATE fk_dc SET pid = NULL WHERE pid = 1;
COMMIT;
SELECT * FROM fk_dc ORDER BY id;
INSERT INTO fk_dc VALUES (4, 99);
INSERT INTO fk_di VALUES (1, 5);
BEGIN;
SET CONSTRAINTS di_p DEFERRED;
INSERT INTO fk_di VALUES (1, 5);
INSERT INTO fk_dp VALUES (5);
COMMIT;
BEGIN;
SET CONSTRAINTS ALL DEFERRED;
INSERT INTO fk_di VALUES (2, 6);
SET CONSTRAINTS ALL IMMEDIATE;
ROLLBACK;
BEGIN;
SET CONSTRAINTS fk_dc_pid_fkey IMMEDIATE;
INSERT INTO fk_dc VALUES (5, 7);
ROLLBACK;
BEGIN;
SET CONSTRAINTS fk_c_pid_fkey DEFERRED;
ROLLBACK;
BEGIN;
SET CONSTRAINTS nosuch IMMEDIATE;
ROLLBACK;
SET CONSTRAINTS ALL DEFERRED;
DELETE FROM fk_dp WHERE id = 5;
SELECT count(*) FROM fk_di;
SELECT conname, condeferrable, condeferred, pg_get_constraintdef(oid)
  FROM pg_constraint WHERE conrelid IN ('fk_dc'::regclass, 'fk_di'::regclass)
  AND contype = 'f' ORDER BY 1;
CREATE TABLE fk_bad (x int REFERENCES fk_dp NOT DEFERRABLE INITIALLY DEFERRED);
DROP TABLE fk_dc, fk_di, fk_dp;

-- UNIQUE constraints added and dropped; the unique index a key rests on
CREATE TABLE uq (id int PRIMARY KEY, a int, b text);
INSERT INTO uq VALUES (1, 1, 'x'), (2, 1, 'y'), (3, 2, 'x');
ALTER TABLE uq ADD UNIQUE (a);
CREATE UNIQUE INDEX uq_i ON uq (b);
ALTER TABLE uq ADD UNIQUE (a, b);
ALTER TABLE uq ADD CONSTRAINT uq_b UNIQUE (b, a);
INSERT INTO uq VALUES (4, 2, 'x');
CREATE TABLE uqc (id int PRIMARY KEY, a int, b text,
  FOREIGN KEY (a, b) REFERENCES uq (a, b));
ALTER TABLE uq DROP CONSTRAINT uq_a_b_key;
ALTER TABLE uq DROP CONSTRAINT uq_b;
ALTER TABLE uq DROP CONSTRAINT uq_a_b_key;
ALTER TABLE uq ADD CONSTRAINT uq_pkey UNIQUE (a);
ALTER TABLE uq ADD UNIQUE (nosuch);
DELETE FROM uq WHERE id = 2;
CREATE UNIQUE INDEX uq_i ON uq (id, b);
CREATE TABLE uqd (id int PRIMARY KEY, i int, b text,
  FOREIGN KEY (b, i) REFERENCES uq (b, id));
DROP INDEX uq_i;
DROP TABLE uqd, uqc;
DROP INDEX uq_a_b_key;
ALTER TABLE uq DROP CONSTRAINT uq_i;
SELECT constraint_name, constraint_type FROM information_schema.table_constraints
  WHERE table_name = 'uq' AND constraint_type <> 'CHECK' ORDER BY 1;
SELECT conname, contype, conkey, pg_get_constraintdef(oid) FROM pg_constraint
  WHERE conrelid = 'uq'::regclass ORDER BY 1;
\d uq
-- made anew: the constraints stay, one on a column dropped goes
TRUNCATE uq;
ALTER TABLE uq ADD COLUMN c int UNIQUE;
ALTER TABLE uq DROP COLUMN b;
\d uq
ALTER TABLE uq DROP CONSTRAINT uq_a_b_key;
DROP INDEX uq_i;
ALTER TABLE uq DROP CONSTRAINT uq_c_key;
DROP TABLE uq;
CREATE TABLE uq2 (a int UNIQUE, b int, UNIQUE (a, b), CONSTRAINT named UNIQUE (b));
\d uq2
DROP INDEX named;
ALTER TABLE uq2 DROP CONSTRAINT named;
DROP TABLE uq2;

-- TRUNCATE ... CASCADE
CREATE TABLE tc_a (id int PRIMARY KEY);
CREATE TABLE tc_b (id int PRIMARY KEY, a int REFERENCES tc_a);
CREATE TABLE tc_c (id int PRIMARY KEY, b int REFERENCES tc_b);
CREATE TABLE tc_d (id int PRIMARY KEY, d int REFERENCES tc_d);
INSERT INTO tc_a VALUES (1); INSERT INTO tc_b VALUES (1, 1); INSERT INTO tc_c VALUES (1, 1);
INSERT INTO tc_d VALUES (1, 1);
TRUNCATE tc_b;
TRUNCATE tc_a CASCADE;
SELECT (SELECT count(*) FROM tc_a) a, (SELECT count(*) FROM tc_b) b, (SELECT count(*) FROM tc_c) c;
INSERT INTO tc_a VALUES (2); INSERT INTO tc_b VALUES (2, 2);
TRUNCATE tc_b, tc_c CASCADE;
TRUNCATE tc_d;
INSERT INTO tc_b VALUES (3, 3);
INSERT INTO tc_b VALUES (3, 2);
DROP TABLE tc_c, tc_b, tc_a, tc_d;

-- TRUNCATE and DROP
TRUNCATE fk_p;
TRUNCATE fk_a, fk_casc;
TRUNCATE fk_a, fk_casc, fk_grand, fk_null, fk_def, fk_restrict;
INSERT INTO fk_casc VALUES (1, 1);
INSERT INTO fk_a VALUES (1);
INSERT INTO fk_casc VALUES (1, 1);
DELETE FROM fk_a;
SELECT count(*) FROM fk_casc;
DROP TABLE fk_p;
DROP TABLE fk_ok;
DROP TABLE fk_lone;
DROP TABLE fk_c;
DROP TABLE fk_p CASCADE;
DROP TABLE fk_p2, fk_c2, fk_c3;
DROP TABLE fk_tree;
DROP TABLE fk_grand, fk_casc, fk_null, fk_def, fk_restrict, fk_a, fk_nopk;

-- information_schema
CREATE TABLE is_p (a int, b text, PRIMARY KEY (a, b));
CREATE TABLE is_q (id int PRIMARY KEY, n int CHECK (n > 0));
CREATE TABLE is_c (id int PRIMARY KEY, pa int, pb text, q int REFERENCES is_q ON DELETE CASCADE,
  CONSTRAINT c_ab FOREIGN KEY (pb, pa) REFERENCES is_p (b, a) MATCH FULL ON UPDATE SET NULL DEFERRABLE);
SELECT constraint_name, table_name, constraint_type, is_deferrable, initially_deferred, enforced, nulls_distinct
  FROM information_schema.table_constraints
  WHERE table_name IN ('is_p', 'is_q', 'is_c') AND constraint_name NOT LIKE '%not_null'
  ORDER BY constraint_name;
SELECT constraint_name, table_name, column_name, ordinal_position, position_in_unique_constraint
  FROM information_schema.key_column_usage
  WHERE table_name IN ('is_p', 'is_q', 'is_c') ORDER BY constraint_name, ordinal_position;
SELECT constraint_name, unique_constraint_schema, unique_constraint_name, match_option, update_rule, delete_rule
  FROM information_schema.referential_constraints
  WHERE constraint_name IN ('c_ab', 'is_c_q_fkey') ORDER BY constraint_name;
SELECT table_name, column_name, constraint_name
  FROM information_schema.constraint_column_usage
  WHERE constraint_name IN ('c_ab', 'is_c_q_fkey', 'is_p_pkey', 'is_c_pkey')
  ORDER BY constraint_name, column_name;
DROP TABLE is_c, is_p, is_q;
SELECT count(*) FROM pg_constraint WHERE contype = 'f';
-- the query Django's introspection reads constraints with
CREATE TABLE dj_p (id int PRIMARY KEY);
CREATE TABLE dj_c (id int PRIMARY KEY,
  p_id int REFERENCES dj_p DEFERRABLE INITIALLY DEFERRED, a int, b int,
  UNIQUE (a, b));
SELECT
    c.conname,
    array(
        SELECT attname
        FROM unnest(c.conkey) WITH ORDINALITY cols(colid, arridx)
        JOIN pg_attribute AS ca ON cols.colid = ca.attnum
        WHERE ca.attrelid = c.conrelid
        ORDER BY cols.arridx
    ),
    c.contype,
    (SELECT fkc.relname || '.' || fka.attname
    FROM pg_attribute AS fka
    JOIN pg_class AS fkc ON fka.attrelid = fkc.oid
    WHERE fka.attrelid = c.confrelid AND fka.attnum = c.confkey[1]),
    cl.reloptions
FROM pg_constraint AS c
JOIN pg_class AS cl ON c.conrelid = cl.oid
WHERE cl.relname = 'dj_c' AND pg_catalog.pg_table_is_visible(cl.oid)
ORDER BY 1;
DROP TABLE dj_c, dj_p;
-- psql's \d lists a table's foreign keys and the keys that reference it
CREATE TABLE d_p (id int PRIMARY KEY, code text UNIQUE);
CREATE TABLE d_c (id int PRIMARY KEY, p int REFERENCES d_p ON DELETE CASCADE,
  code text, FOREIGN KEY (code) REFERENCES d_p (code) ON UPDATE SET NULL);
CREATE TABLE d_self (id int PRIMARY KEY, up int REFERENCES d_self);
\d d_p
\d d_c
\d d_self
SELECT relname, relhastriggers FROM pg_class
  WHERE relname IN ('d_p', 'd_c', 'd_self', 'dj_c') ORDER BY 1;
-- what a key depends on: its columns, and those it references
SELECT d.classid::regclass, d.refobjid::regclass, a.attname, d.deptype
  FROM pg_depend d JOIN pg_constraint k ON k.oid = d.objid
  JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
  WHERE k.conname = 'd_c_p_fkey' AND d.refobjsubid <> 0
  ORDER BY d.refobjid::regclass::text, 3;
-- and an index on the key columns of its table
CREATE INDEX d_c_code ON d_c (code, p);
SELECT d.refobjid::regclass, d.refobjsubid, d.deptype FROM pg_depend d
  WHERE d.objid = 'd_c_code'::regclass ORDER BY 2;
DROP TABLE d_c, d_p, d_self;
SELECT count(*) FROM pg_depend d JOIN pg_class c ON c.oid = d.objid
  WHERE c.relname LIKE 'd\_%';
