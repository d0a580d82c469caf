-- column defaults: INSERT, INSERT ... SELECT, COPY and UPDATE ... DEFAULT
CREATE TABLE df (id int PRIMARY KEY, n int DEFAULT 42, t text DEFAULT 'none' || '!',
                 v varchar(3) DEFAULT 'abc', f float8 DEFAULT 1.5, z int DEFAULT NULL,
                 k bigint NOT NULL DEFAULT -7);
INSERT INTO df (id) VALUES (1);
INSERT INTO df VALUES (2, DEFAULT, 'given', DEFAULT);
INSERT INTO df (id, n) VALUES (3, NULL), (4, 5) RETURNING *;
INSERT INTO df (id) SELECT id + 10 FROM df WHERE id < 3;
COPY df (id, t) FROM STDIN;
20	copied
\.
UPDATE df SET n = n + 1 WHERE id = 1;
UPDATE df SET n = DEFAULT, t = DEFAULT, z = DEFAULT WHERE id = 4;
SELECT * FROM df ORDER BY id;
-- defaults evaluated per row
CREATE TABLE dt (id int PRIMARY KEY, at timestamptz DEFAULT now(), r float8 DEFAULT random());
INSERT INTO dt (id) VALUES (1), (2);
SELECT count(*), min(r) <> max(r), min(at) = max(at) FROM dt;
-- TRUNCATE keeps them; DROP takes them
TRUNCATE df;
INSERT INTO df (id) VALUES (1);
SELECT * FROM df;
DROP TABLE df;
CREATE TABLE df (id int PRIMARY KEY, n int);
INSERT INTO df (id) VALUES (1);
SELECT * FROM df;
-- rolled back with its table
BEGIN;
CREATE TABLE dr (id int PRIMARY KEY, n int DEFAULT 9);
INSERT INTO dr (id) VALUES (1);
SELECT * FROM dr;
ROLLBACK;
CREATE TABLE dr (id int PRIMARY KEY, n int);
INSERT INTO dr (id) VALUES (1);
SELECT * FROM dr;
-- errors
CREATE TABLE de (id int DEFAULT 'x');
CREATE TABLE de (id int DEFAULT 1 DEFAULT 2);
CREATE TABLE de (id int, n int DEFAULT id);
CREATE TABLE de (id int DEFAULT count(*));
CREATE TABLE de (id int, v varchar(2) DEFAULT 'long');
INSERT INTO de (id) VALUES (1);
DROP TABLE df;
DROP TABLE dt;
DROP TABLE dr;
DROP TABLE de;
