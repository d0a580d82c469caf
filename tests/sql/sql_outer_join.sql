-- RIGHT and FULL joins
CREATE TABLE oa (id int PRIMARY KEY, k int, name text);
CREATE TABLE ob (id int PRIMARY KEY, k int, note text);
CREATE TABLE oc (k int, tag text);
INSERT INTO oa VALUES (1, 10, 'one'), (2, 20, 'two'), (3, 30, 'three'), (4, NULL, 'four');
INSERT INTO ob VALUES (1, 10, 'x'), (2, 20, 'y'), (3, 20, 'z'), (5, 50, 'w'), (6, NULL, 'v');
INSERT INTO oc VALUES (10, 't10'), (50, 't50'), (60, 't60');
-- hash join on an equality, a nested loop on anything else
SELECT * FROM oa RIGHT JOIN ob ON oa.k = ob.k ORDER BY ob.id;
SELECT * FROM oa RIGHT OUTER JOIN ob ON oa.k < ob.k ORDER BY ob.id, oa.id;
SELECT * FROM oa FULL JOIN ob ON oa.k = ob.k ORDER BY oa.id, ob.id;
-- the primary key, and a condition on both sides
SELECT oa.id, ob.id FROM oa FULL JOIN ob ON oa.id = ob.id ORDER BY 1, 2;
SELECT oa.name, ob.note FROM oa FULL JOIN ob ON oa.id = ob.id AND ob.note <> 'y'
  ORDER BY oa.name, ob.note;
-- WHERE after the join: unmatched rows are there to test
SELECT ob.id FROM oa RIGHT JOIN ob ON oa.k = ob.k WHERE oa.id IS NULL ORDER BY 1;
SELECT oa.id, ob.id FROM oa FULL JOIN ob ON oa.k = ob.k
  WHERE oa.id IS NULL OR ob.id IS NULL ORDER BY 1, 2;
SELECT oa.id, ob.id FROM oa RIGHT JOIN ob ON oa.k = ob.k WHERE oa.id = 2 ORDER BY 2;
-- three tables: joins after a RIGHT or FULL one see its rows
SELECT oa.id, ob.id, oc.tag FROM oa RIGHT JOIN ob ON oa.k = ob.k
  LEFT JOIN oc ON oc.k = ob.k ORDER BY 2, 1;
SELECT oa.id, ob.id, oc.tag FROM oa JOIN ob ON oa.k = ob.k
  RIGHT JOIN oc ON oc.k = ob.k ORDER BY 3, 1, 2;
SELECT oa.id, ob.id, oc.tag FROM oa FULL JOIN ob ON oa.k = ob.k
  FULL JOIN oc ON oc.k = coalesce(oa.k, ob.k) ORDER BY 1, 2, 3;
SELECT oa.id, ob.id, oc.tag FROM oa RIGHT JOIN ob ON oa.k = ob.k
  RIGHT JOIN oc ON oc.k = ob.k ORDER BY 3, 1, 2;
-- after another item, or on the right of a join: read whole
SELECT oc.tag, oa.id, ob.id FROM oc, oa RIGHT JOIN ob ON oa.k = ob.k
  WHERE oc.k = ob.k ORDER BY 1, 2, 3;
SELECT oc.tag, oa.id, ob.id FROM oc LEFT JOIN (oa FULL JOIN ob ON oa.k = ob.k)
  ON oc.k = ob.k ORDER BY 1, 2, 3;
-- subqueries, WITH, VALUES and generate_series on either side
SELECT x.n, ob.id FROM (SELECT 20 AS n UNION ALL SELECT 70) x
  FULL JOIN ob ON ob.k = x.n ORDER BY 1, 2;
WITH w AS (SELECT k, count(*) AS c FROM ob GROUP BY k)
SELECT oa.name, w.k, w.c FROM oa RIGHT JOIN w ON w.k = oa.k ORDER BY 2, 1;
SELECT g, oa.name FROM oa RIGHT JOIN generate_series(10, 40, 10) g ON g = oa.k
  ORDER BY g;
SELECT g, oa.name FROM oa FULL JOIN generate_series(25, 35, 5) g ON g = oa.k
  ORDER BY g, oa.name;
SELECT * FROM (VALUES (1), (2)) v(a) FULL JOIN (VALUES (2), (3)) w(b) ON a = b
  ORDER BY a, b;
-- aggregates, DISTINCT and LIMIT over them
SELECT count(*), count(oa.id), count(ob.id) FROM oa FULL JOIN ob ON oa.k = ob.k;
SELECT ob.k, count(oa.id) FROM oa RIGHT JOIN ob ON oa.k = ob.k GROUP BY ob.k
  ORDER BY 1;
SELECT DISTINCT oa.k IS NULL AS no_a FROM oa RIGHT JOIN ob ON oa.k = ob.k
  ORDER BY 1;
SELECT ob.id FROM oa RIGHT JOIN ob ON oa.k = ob.k ORDER BY ob.id LIMIT 2;
-- USING and NATURAL
SELECT * FROM oa RIGHT JOIN ob USING (k) ORDER BY k, 2, 4;
SELECT k, oa.k AS ak, ob.k AS bk FROM oa RIGHT JOIN ob USING (k) ORDER BY ob.id;
SELECT * FROM oc NATURAL RIGHT JOIN ob ORDER BY id;
-- FULL JOIN ... USING: the merged column is coalesce(left, right)
CREATE TABLE fa (id int PRIMARY KEY, k int, name text);
CREATE TABLE fb (id bigint PRIMARY KEY, k int, note text);
CREATE TABLE fc (k int, tag text);
INSERT INTO fa VALUES (1, 10, 'one'), (2, 20, 'two'), (3, 30, 'three'), (4, NULL, 'four');
INSERT INTO fb VALUES (1, 10, 'x'), (2, 20, 'y'), (3, 20, 'z'), (5, 50, 'w'), (6, NULL, 'v');
INSERT INTO fc VALUES (10, 't10'), (50, 't50'), (60, 't60');
SELECT * FROM fa FULL JOIN fb USING (k) ORDER BY k, fa.id, fb.id;
SELECT k, fa.k AS ak, fb.k AS bk FROM fa FULL JOIN fb USING (k) ORDER BY 1, 2, 3;
SELECT * FROM fa FULL JOIN fb USING (id) ORDER BY id;
SELECT id, pg_typeof(id) FROM fa FULL JOIN fb USING (id) ORDER BY id LIMIT 1;
SELECT * FROM fa FULL JOIN fb USING (id, k) ORDER BY id, k;
SELECT * FROM fc NATURAL FULL JOIN fb ORDER BY k, id;
SELECT * FROM fa FULL JOIN fb USING (k) FULL JOIN fc USING (k) ORDER BY k, 2, 4;
SELECT * FROM fa FULL JOIN fb USING (k) JOIN fc USING (k) ORDER BY k, 2, 4;
SELECT k, count(*) FROM fa FULL JOIN fb USING (k) GROUP BY k ORDER BY k;
SELECT * FROM fa FULL JOIN fb USING (k) WHERE k IS NULL ORDER BY fa.id, fb.id;
SELECT * FROM fa FULL JOIN fc USING (tag);
SELECT * FROM fa FULL JOIN fc USING (name);
SELECT * FROM fa FULL JOIN (SELECT 'x'::text AS k) t USING (k);
-- empty sides
CREATE TABLE oe (k int);
SELECT * FROM oe RIGHT JOIN oc ON oe.k = oc.k ORDER BY oc.k;
SELECT * FROM oc FULL JOIN oe ON oe.k = oc.k ORDER BY oc.k;
SELECT * FROM oe FULL JOIN oe AS o2 ON oe.k = o2.k;
-- UPDATE ... FROM and DELETE ... USING with one
BEGIN;
UPDATE oa SET name = name || '!' FROM oc RIGHT JOIN ob ON oc.k = ob.k
  WHERE oa.id = ob.id AND oc.tag IS NULL;
SELECT id, name FROM oa ORDER BY id;
DELETE FROM oa USING oc FULL JOIN ob ON oc.k = ob.k
  WHERE oa.id = ob.id AND oc.tag IS NOT NULL;
SELECT id, name FROM oa ORDER BY id;
ROLLBACK;
-- errors
SELECT * FROM oa RIGHT JOIN ob ON nosuch = 1;
SELECT * FROM oa FULL JOIN ob ON oa.k = ob.k + 'x';
DROP TABLE oa;
DROP TABLE ob;
DROP TABLE oc;
DROP TABLE oe;
DROP TABLE fa;
DROP TABLE fb;
DROP TABLE fc;
-- An ON condition sees only what is joined by then.
SELECT 1 FROM (VALUES (1)) x(a) JOIN (VALUES (1)) y(a) ON y.a = z.a LEFT JOIN (VALUES (1)) z(a) ON true;
