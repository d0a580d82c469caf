-- WITH: queries named for the query and its subqueries, each seeing the
-- ones before it; column lists; a name hiding a table's.
CREATE TABLE w_t (id int PRIMARY KEY, grp text, n int);
INSERT INTO w_t SELECT g, 'g' || (g % 3), g * 10 FROM generate_series(1, 9) g;
WITH big AS (SELECT id, n FROM w_t WHERE n > 40)
SELECT count(*), sum(n) FROM big;
WITH t(a, b) AS (SELECT grp, sum(n) FROM w_t GROUP BY grp),
     u AS (SELECT a, b * 2 AS b2 FROM t WHERE b > 100)
SELECT * FROM u ORDER BY a;
WITH s AS (SELECT id FROM w_t WHERE id % 2 = 0)
SELECT w.id, w.n FROM w_t w JOIN s ON s.id = w.id ORDER BY w.id;
WITH s AS (SELECT id FROM w_t WHERE id < 4)
SELECT id FROM w_t WHERE id IN (SELECT id FROM s) AND
  EXISTS (SELECT 1 FROM s s2 WHERE s2.id = w_t.id) ORDER BY id;
WITH x AS (SELECT 1 AS v), y AS (SELECT v + 1 AS v FROM x)
SELECT * FROM x, y;
WITH w_t AS (SELECT 42 AS id)
SELECT * FROM w_t;
WITH a AS (SELECT 1 AS v) SELECT * FROM a UNION ALL SELECT 2 ORDER BY 1;
SELECT (WITH m AS (SELECT max(n) AS top FROM w_t) SELECT top FROM m);
WITH r(x) AS (SELECT id FROM w_t) SELECT q.z FROM r AS q(z) ORDER BY 1 LIMIT 3;
-- A WITH inside a WITH query, its siblings after it still in scope.
WITH a AS (WITH b AS (SELECT 1 AS x) SELECT x + 10 AS y FROM b),
     c AS (SELECT y * 2 AS z FROM a)
SELECT * FROM c, a;
-- Errors and what is not there yet.
WITH a AS (SELECT 1), a AS (SELECT 2) SELECT * FROM a;
WITH a AS (SELECT * FROM b), b AS (SELECT 1) SELECT * FROM a;
DROP TABLE w_t;
