-- Tables, rows and queries that keel answers as PostgreSQL 15 does.
CREATE TABLE dept (id int PRIMARY KEY, name text NOT NULL, budget double precision);
CREATE TABLE emp (id int PRIMARY KEY, name text NOT NULL, dept int, salary bigint, hired date, code char(4), active boolean);
INSERT INTO dept VALUES (1, 'eng', 1.5e6), (2, 'ops', 250000.25), (3, 'empty', NULL);
INSERT INTO emp VALUES
  (10, 'ann', 1, 120000, '2019-03-01', 'A1', true),
  (11, 'bob', 1, 95000, '2020-11-15', 'B22', true),
  (12, 'cy', 2, 70000, '2021-06-30', NULL, false),
  (13, 'dee', NULL, NULL, NULL, 'D', NULL);
SELECT * FROM dept ORDER BY id;
SELECT id, name, code, code || '|' AS padded, length(code) FROM emp ORDER BY id;
SELECT name FROM emp WHERE salary > 90000 AND active ORDER BY name DESC;
SELECT name, salary / 1000 AS k, salary % 7 AS m FROM emp WHERE id BETWEEN 11 AND 12 ORDER BY 1;
SELECT name FROM emp WHERE dept IN (2, 3) OR dept IS NULL ORDER BY id;
SELECT name FROM emp WHERE name LIKE '_o%' OR name NOT LIKE '%e%' ORDER BY id;
SELECT CASE WHEN salary >= 100000 THEN 'high' WHEN salary IS NULL THEN 'unknown' ELSE 'normal' END AS band, count(*) FROM emp GROUP BY 1 ORDER BY 1;
SELECT coalesce(dept, -1) AS d, count(*), sum(salary), min(hired), max(name) FROM emp GROUP BY dept ORDER BY 1;
SELECT count(*), count(salary), sum(salary), max(salary), min(code) FROM emp;
SELECT DISTINCT active FROM emp ORDER BY active;
SELECT e.name, d.name AS dept FROM emp e JOIN dept d ON d.id = e.dept ORDER BY e.id;
SELECT d.name, e.name FROM dept d LEFT JOIN emp e ON e.dept = d.id ORDER BY d.id, e.id;
SELECT d.name, count(e.id) FROM dept d LEFT JOIN emp e ON e.dept = d.id GROUP BY d.name HAVING count(e.id) < 2 ORDER BY 1;
SELECT name FROM emp ORDER BY id LIMIT 2 OFFSET 1;
SELECT 1 + 2 * 3, 7 / 2, -7 / 2, 7 % -3, 2.5::float8 * 4, 'x' || 1, true AND NULL, false OR NULL;
SELECT NULL::int IS NULL, 1 = NULL, NULL IN (1), 1 IN (1, NULL), 2 NOT IN (1, NULL);
SELECT '2024-02-29'::date, '2026-12-06 10:11:12.5'::timestamp, '1999-12-31 23:59:59+02'::timestamptz;
SELECT '42'::int + 1, '1e3'::float8, 'yes'::boolean, 12::text, 3.75::float8::int;
BEGIN;
UPDATE emp SET salary = salary + 1000 WHERE dept = 1;
SELECT id, salary FROM emp WHERE dept = 1 ORDER BY id;
UPDATE emp SET id = id + 100 WHERE id < 12;
SELECT id FROM emp ORDER BY id;
DELETE FROM emp WHERE active IS NULL;
SELECT count(*) FROM emp;
ROLLBACK;
SELECT count(*) FROM emp;
SELECT 1/0;
SELECT 2147483647 + 1;
SELECT * FROM nosuch;
SELECT nosuch FROM emp;
INSERT INTO emp (id, name) VALUES (10, 'again');
INSERT INTO emp (id, name) VALUES (20, NULL);
INSERT INTO emp (id, name, code) VALUES (21, 'x', 'toolong');
BEGIN;
SELECT 1/0;
SELECT 1;
COMMIT;
ALTER TABLE dept ADD PRIMARY KEY (name);
TRUNCATE dept;
SELECT count(*) FROM dept;
DROP TABLE emp, dept;
DROP TABLE IF EXISTS emp;
-- Set operations: duplicates and NULLs as PostgreSQL counts them.
CREATE TABLE sa (x int, y text);
CREATE TABLE sb (x int, y text);
INSERT INTO sa VALUES (1, 'a'), (1, 'a'), (1, 'a'), (2, 'b'), (NULL, 'n'), (NULL, 'n'), (3, NULL);
INSERT INTO sb VALUES (1, 'a'), (2, 'b'), (2, 'b'), (NULL, 'n'), (4, 'd'), (3, NULL);
SELECT * FROM sa INTERSECT SELECT * FROM sb ORDER BY 1, 2;
SELECT * FROM sa INTERSECT ALL SELECT * FROM sb ORDER BY 1, 2;
SELECT * FROM sa EXCEPT SELECT * FROM sb ORDER BY 1, 2;
SELECT * FROM sa EXCEPT ALL SELECT * FROM sb ORDER BY 1, 2;
SELECT x FROM sb EXCEPT ALL SELECT x FROM sa ORDER BY 1;
SELECT x FROM sa UNION SELECT x FROM sb EXCEPT SELECT 2 ORDER BY 1;
SELECT x FROM sa INTERSECT SELECT x FROM sb ORDER BY 1 LIMIT 2;
DROP TABLE sa, sb;
