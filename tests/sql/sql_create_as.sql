-- CREATE TABLE AS and SELECT INTO
CREATE TABLE src (id int PRIMARY KEY, name varchar(20), code char(3), amount numeric(8,2), at timestamptz, ok boolean);
INSERT INTO src VALUES (1, 'one', 'abc', 10.50, '2024-01-01 10:00+00', true),
  (2, 'two', 'def', NULL, '2024-02-01 11:00+00', false), (3, NULL, 'ghi', 3.25, NULL, NULL);
CREATE TABLE copy1 AS SELECT * FROM src WHERE id < 3;
SELECT * FROM copy1 ORDER BY id;
\d copy1
CREATE TABLE sums (who, total) AS SELECT coalesce(name, '?')::text, sum(amount) FROM src GROUP BY 1;
SELECT * FROM sums ORDER BY who;
\d sums
CREATE TABLE empty1 AS SELECT id, name FROM src WITH NO DATA;
SELECT count(*) FROM empty1;
SELECT id * 10 AS big, upper(code) INTO copy2 FROM src ORDER BY id;
SELECT * FROM copy2;
CREATE TABLE IF NOT EXISTS copy1 AS SELECT 1;
-- in a transaction that rolls back, the table goes too
BEGIN;
CREATE TABLE gone AS SELECT n FROM generate_series(1, 5) n;
SELECT sum(n) FROM gone;
ROLLBACK;
SELECT * FROM gone;
-- errors
CREATE TABLE copy1 AS SELECT 1;
CREATE TABLE twice AS SELECT 1 AS a, 2 AS a;
CREATE TABLE toomany (a, b) AS SELECT 1;
CREATE TABLE bad AS SELECT 1/0 AS x FROM src;
SELECT * FROM bad;
DROP TABLE copy1;
DROP TABLE copy2;
DROP TABLE sums;
DROP TABLE empty1;
DROP TABLE src;
