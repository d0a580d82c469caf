-- WITH RECURSIVE
WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 10)
SELECT sum(n), count(*), max(n) FROM t;
WITH RECURSIVE fib(i, a, b) AS (
  SELECT 1, 0::bigint, 1::bigint
  UNION ALL
  SELECT i + 1, b, a + b FROM fib WHERE i < 20)
SELECT i, a FROM fib ORDER BY i DESC LIMIT 5;
CREATE TABLE tree (id int PRIMARY KEY, parent int, name text);
INSERT INTO tree VALUES (1, NULL, 'root'), (2, 1, 'a'), (3, 1, 'b'), (4, 2, 'a1'),
  (5, 2, 'a2'), (6, 4, 'a1x'), (7, 3, 'b1'), (8, NULL, 'other'), (9, 8, 'o1');
-- descendants with depth and path
WITH RECURSIVE sub AS (
  SELECT id, name, 0 AS depth, name AS path FROM tree WHERE id = 1
  UNION ALL
  SELECT t.id, t.name, s.depth + 1, s.path || '/' || t.name
  FROM tree t JOIN sub s ON t.parent = s.id)
SELECT * FROM sub ORDER BY path;
-- ancestors
WITH RECURSIVE up(id, parent, name) AS (
  SELECT id, parent, name FROM tree WHERE id = 6
  UNION
  SELECT t.id, t.parent, t.name FROM tree t, up WHERE t.id = up.parent)
SELECT name FROM up ORDER BY id;
-- UNION removes repeats, so a cycle ends
CREATE TABLE edge (a int, b int);
INSERT INTO edge VALUES (1, 2), (2, 3), (3, 1), (3, 4), (5, 6);
WITH RECURSIVE reach(node) AS (
  SELECT 1
  UNION
  SELECT e.b FROM edge e JOIN reach r ON e.a = r.node)
SELECT node FROM reach ORDER BY node;
-- the number of steps reachable in, with UNION ALL and a bound
WITH RECURSIVE walk(node, steps) AS (
  SELECT 1, 0
  UNION ALL
  SELECT e.b, w.steps + 1 FROM edge e JOIN walk w ON e.a = w.node WHERE w.steps < 5)
SELECT node, min(steps), count(*) FROM walk GROUP BY node ORDER BY node;
-- a second term that does not read the query, other WITH queries
WITH RECURSIVE a AS (SELECT 1 AS x UNION SELECT 2), b AS (SELECT x * 10 AS y FROM a)
SELECT * FROM b ORDER BY y;
WITH RECURSIVE nums AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM nums WHERE n < 3),
  sq AS (SELECT n, n * n AS sq FROM nums)
SELECT sq.n, sq.sq, nums.n AS again FROM sq JOIN nums ON nums.n = sq.n ORDER BY 1;
-- in a subquery and in a view
SELECT (WITH RECURSIVE c(k) AS (SELECT 1 UNION ALL SELECT k * 2 FROM c WHERE k < 1000) SELECT max(k) FROM c) AS pow;
CREATE VIEW tree_depth AS
  WITH RECURSIVE d(id, depth) AS (
    SELECT id, 0 FROM tree WHERE parent IS NULL
    UNION ALL
    SELECT t.id, d.depth + 1 FROM tree t JOIN d ON t.parent = d.id)
  SELECT id, depth FROM d;
SELECT depth, count(*) FROM tree_depth GROUP BY depth ORDER BY depth;
DROP VIEW tree_depth;
-- text grows step by step
WITH RECURSIVE s(v) AS (SELECT 'a' UNION ALL SELECT v || 'b' FROM s WHERE length(v) < 4)
SELECT v FROM s;
-- errors
WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1.5 FROM t WHERE n < 3) SELECT * FROM t;
WITH RECURSIVE t(n) AS (SELECT n FROM t) SELECT * FROM t;
WITH RECURSIVE t(n) AS (SELECT n FROM t UNION ALL SELECT 1) SELECT * FROM t;
WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n, n FROM t) SELECT * FROM t;
WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t ORDER BY 1) SELECT * FROM t;
WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t LIMIT 3) SELECT * FROM t;
WITH RECURSIVE t(n, m) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT * FROM t;
DROP TABLE tree;
DROP TABLE edge;
-- mutual recursion is refused
WITH RECURSIVE a AS (SELECT 1 AS x UNION ALL SELECT x FROM b), b AS (SELECT x FROM a) SELECT * FROM a;
-- a recursion that never ends ends at statement_timeout
SET statement_timeout = '100ms';
WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT count(*) FROM t;
RESET statement_timeout;
