-- window functions
CREATE TABLE wemp (id int PRIMARY KEY, dept text, salary numeric(10,2), bonus double precision, hired date);
INSERT INTO wemp VALUES
  (1, 'eng', 100.50, 1.5, '2020-01-01'),
  (2, 'eng', 120.00, 2.0, '2020-02-01'),
  (3, 'eng', 120.00, NULL, '2021-01-01'),
  (4, 'ops', 90.25, 0.5, '2019-05-01'),
  (5, 'ops', 80.00, 0.25, '2022-03-01'),
  (6, 'sales', 70.00, 3.0, '2020-07-01'),
  (7, 'eng', NULL, 1.0, '2023-01-01'),
  (8, NULL, 60.00, NULL, '2018-01-01');
-- ranking within partitions; NULL keys form their own partition
SELECT id, dept, salary,
       row_number() OVER (PARTITION BY dept ORDER BY salary DESC NULLS LAST, id) AS rn,
       rank() OVER (PARTITION BY dept ORDER BY salary DESC NULLS LAST) AS rk,
       dense_rank() OVER (PARTITION BY dept ORDER BY salary DESC NULLS LAST) AS dr
FROM wemp ORDER BY dept NULLS FIRST, rn;
-- aggregates: running (peers share a value), whole partition, whole set
SELECT id, salary,
       sum(salary) OVER (ORDER BY salary) AS running,
       count(salary) OVER (ORDER BY salary) AS cnt,
       sum(salary) OVER (PARTITION BY dept) AS dept_total,
       avg(bonus) OVER () AS avg_bonus,
       min(hired) OVER (PARTITION BY dept) AS first_hire,
       max(salary) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS max3
FROM wemp ORDER BY id;
SELECT id, dept, string_agg(id::text, ',') OVER (PARTITION BY dept ORDER BY id) AS ids
FROM wemp ORDER BY id;
-- frames in ROWS
SELECT id,
       sum(id) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS s3,
       sum(id) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS rest,
       sum(id) OVER (ORDER BY id ROWS BETWEEN 2 FOLLOWING AND 3 FOLLOWING) AS ahead,
       sum(id) OVER (ORDER BY id ROWS BETWEEN 3 PRECEDING AND 1 PRECEDING) AS behind,
       count(*) OVER (ORDER BY id ROWS UNBOUNDED PRECEDING) AS upto
FROM wemp ORDER BY id;
-- RANGE frames over peers, and exclusions
SELECT id, salary,
       sum(id) OVER (ORDER BY salary RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS from_here,
       sum(id) OVER (ORDER BY salary ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING EXCLUDE CURRENT ROW) AS others,
       sum(id) OVER (ORDER BY salary ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING EXCLUDE GROUP) AS not_peers,
       sum(id) OVER (ORDER BY salary ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING EXCLUDE TIES) AS no_ties
FROM wemp ORDER BY id;
-- value functions
SELECT id,
       lag(id) OVER w AS prev,
       lag(id, 2, -1) OVER w AS prev2,
       lead(id) OVER w AS next,
       lead(dept, 1, 'none') OVER w AS next_dept,
       lag(id, -1) OVER w AS lag_back,
       first_value(id) OVER w AS first,
       last_value(id) OVER w AS last_so_far,
       last_value(id) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS last,
       nth_value(id, 3) OVER w AS third
FROM wemp WINDOW w AS (ORDER BY id) ORDER BY id;
-- distribution
SELECT id, salary,
       ntile(3) OVER (ORDER BY id) AS t3,
       ntile(5) OVER (PARTITION BY dept ORDER BY id) AS t5,
       percent_rank() OVER (ORDER BY salary) AS pr,
       cume_dist() OVER (ORDER BY salary) AS cd
FROM wemp ORDER BY id;
-- named windows built on each other
SELECT id, dept,
       row_number() OVER d AS by_dept,
       sum(id) OVER (d ORDER BY id) AS running
FROM wemp WINDOW d AS (PARTITION BY dept) ORDER BY id;
-- over groups, and in expressions
SELECT dept, sum(salary) AS total,
       rank() OVER (ORDER BY sum(salary) DESC) AS rk,
       round(100 * sum(salary) / sum(sum(salary)) OVER (), 1) AS pct
FROM wemp GROUP BY dept ORDER BY rk, dept;
SELECT id, salary - avg(salary) OVER (PARTITION BY dept) AS diff
FROM wemp ORDER BY id;
-- ORDER BY, DISTINCT and LIMIT after the windows
SELECT id, row_number() OVER (ORDER BY id DESC) AS rn FROM wemp ORDER BY rn LIMIT 3;
SELECT DISTINCT dept, count(*) OVER (PARTITION BY dept) FROM wemp ORDER BY 1;
SELECT id FROM wemp ORDER BY row_number() OVER (ORDER BY id DESC) LIMIT 2 OFFSET 1;
-- in subqueries, WITH, joins and views
SELECT * FROM (SELECT id, dept, rank() OVER (PARTITION BY dept ORDER BY salary DESC) AS rk FROM wemp) r
WHERE rk = 1 ORDER BY id;
WITH ranked AS (SELECT id, row_number() OVER (ORDER BY hired) AS seniority FROM wemp)
SELECT e.id, e.dept, r.seniority FROM wemp e JOIN ranked r ON r.id = e.id WHERE r.seniority <= 3 ORDER BY r.seniority;
CREATE VIEW wemp_rank AS SELECT id, dense_rank() OVER (ORDER BY salary DESC NULLS LAST) AS dr FROM wemp;
SELECT * FROM wemp_rank ORDER BY dr, id;
DROP VIEW wemp_rank;
SELECT row_number() OVER () AS only_row;
SELECT count(*) OVER () FROM wemp WHERE id > 100;
-- arguments that are NULL or as large as they come
SELECT id, ntile(NULL::int) OVER () AS nt, lag(id, NULL::int) OVER (ORDER BY id) AS lg,
       nth_value(id, NULL::int) OVER (ORDER BY id) AS nv,
       sum(id) OVER (ORDER BY id ROWS BETWEEN 9223372036854775807 PRECEDING
                                    AND 9223372036854775807 FOLLOWING) AS everything,
       sum(id) OVER (ORDER BY id ROWS BETWEEN 9223372036854775807 FOLLOWING
                                    AND UNBOUNDED FOLLOWING) AS nothing
FROM wemp ORDER BY id;
-- errors
SELECT id FROM wemp WHERE row_number() OVER () > 1;
SELECT dept FROM wemp GROUP BY dept HAVING rank() OVER () > 1;
SELECT row_number() FROM wemp;
SELECT lower(dept) OVER () FROM wemp;
SELECT sum(row_number() OVER ()) FROM wemp;
SELECT row_number() OVER (ORDER BY rank() OVER ()) FROM wemp;
SELECT lag(row_number() OVER ()) OVER () FROM wemp;
SELECT rank() OVER nowhere FROM wemp;
SELECT sum(id) OVER (d PARTITION BY id) FROM wemp WINDOW d AS (PARTITION BY dept);
SELECT sum(id) OVER (d ORDER BY id) FROM wemp WINDOW d AS (ORDER BY salary);
SELECT sum(id) OVER (d) FROM wemp WINDOW d AS (ORDER BY id ROWS 1 PRECEDING);
SELECT count(DISTINCT dept) OVER () FROM wemp;
SELECT ntile(0) OVER () FROM wemp;
SELECT nth_value(id, 0) OVER () FROM wemp;
SELECT sum(id) OVER (ORDER BY id ROWS BETWEEN -1 PRECEDING AND CURRENT ROW) FROM wemp;
SELECT sum(id) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND NULL FOLLOWING) FROM wemp;
SELECT x, row_number() OVER (PARTITION BY x) FROM wemp;
DROP TABLE wemp;
