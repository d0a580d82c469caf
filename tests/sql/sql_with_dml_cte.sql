-- INSERT, UPDATE and DELETE in WITH
CREATE TABLE src (id int PRIMARY KEY, v text, n int);
CREATE TABLE arch (id int PRIMARY KEY, v text);
INSERT INTO src VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30), (4, 'd', 40);
-- rows moved: deleted from one table, inserted into another
WITH moved AS (DELETE FROM src WHERE n < 25 RETURNING id, v)
INSERT INTO arch SELECT id, v FROM moved;
SELECT * FROM src ORDER BY id;
SELECT * FROM arch ORDER BY id;
-- the query reads what RETURNING gave
WITH up AS (UPDATE src SET n = n + 1 RETURNING id, n)
SELECT count(*) AS updated, sum(n) AS new_sum FROM up;
SELECT sum(n) FROM src;
WITH ins AS (INSERT INTO src VALUES (5, 'e', 50), (6, 'f', 60) RETURNING *)
SELECT id, v, n * 2 AS twice FROM ins ORDER BY id;
-- one WITH query reads an earlier one; several change tables
WITH d AS (DELETE FROM arch WHERE id = 1 RETURNING id, v),
     i AS (INSERT INTO src SELECT id + 100, v, 0 FROM d RETURNING id)
SELECT * FROM i;
SELECT id, v FROM src WHERE id > 100;
-- without RETURNING it runs, and cannot be read
WITH gone AS (DELETE FROM src WHERE id = 101) SELECT count(*) FROM arch;
SELECT count(*) FROM src WHERE id = 101;
WITH gone AS (DELETE FROM src WHERE id = 6) SELECT * FROM gone;
-- before an UPDATE, and with column names
WITH new_v (k, nv) AS (DELETE FROM arch RETURNING id, upper(v))
UPDATE src SET v = nv FROM new_v WHERE src.id = new_v.k + 0 RETURNING src.id, src.v;
SELECT count(*) FROM arch;
-- errors roll everything back
WITH bad AS (INSERT INTO src VALUES (3, 'dup', 0) RETURNING id)
SELECT * FROM bad;
WITH ok AS (DELETE FROM src RETURNING id) SELECT 1 / 0 FROM ok;
SELECT count(*) FROM src;
DROP TABLE src;
DROP TABLE arch;
