-- INSERT ... SELECT: the query's rows assigned to the target's columns
CREATE TABLE is_src (x int PRIMARY KEY, y text, z float8);
INSERT INTO is_src VALUES (1, 'one', 1.5), (2, 'two', NULL), (3, NULL, 2.25);
CREATE TABLE is_dst (x bigint PRIMARY KEY, y text, z float8);
INSERT INTO is_dst SELECT * FROM is_src;
INSERT INTO is_dst (x, y) SELECT x + 10, y || '!' FROM is_src WHERE x > 1;
INSERT INTO is_dst (y, x) SELECT 'sum', sum(x) + 100 FROM is_src;
INSERT INTO is_dst SELECT x + 20 FROM is_src ORDER BY x LIMIT 2;
INSERT INTO is_dst SELECT x + 30, 'c' || x, x * 2 FROM is_src WHERE false;
SELECT * FROM is_dst ORDER BY x;
-- the statement reads the rows as they were before it
INSERT INTO is_src SELECT x + 3, y, z FROM is_src;
SELECT count(*), sum(x) FROM is_src;
-- a failing row inserts nothing
INSERT INTO is_dst SELECT CASE WHEN x = 6 THEN 1 ELSE x + 40 END FROM is_src;
INSERT INTO is_dst SELECT x FROM is_src;
SELECT count(*) FROM is_dst WHERE x > 40;
-- errors
INSERT INTO is_dst SELECT x, y, z, 1 FROM is_src;
INSERT INTO is_dst (x, y) SELECT x FROM is_src;
INSERT INTO is_dst (x) SELECT y FROM is_src;
INSERT INTO is_dst (y) SELECT y FROM is_src;
INSERT INTO is_dst SELECT * FROM is_nosuch;
BEGIN;
INSERT INTO is_dst SELECT x + 50, y, z FROM is_src;
SELECT count(*) FROM is_dst;
ROLLBACK;
SELECT count(*) FROM is_dst;
DROP TABLE is_src;
DROP TABLE is_dst;
