-- Aggregates over DISTINCT: each distinct non-null value once, in order.
CREATE TABLE ad_t (id int PRIMARY KEY, grp text, v int, s text, x numeric);
INSERT INTO ad_t VALUES
  (1, 'a', 1, 'p', 1.5), (2, 'a', 1, 'q', 1.5), (3, 'a', 2, 'p', 2.5),
  (4, 'b', NULL, NULL, NULL), (5, 'b', 3, 'r', 3), (6, 'b', 3, 'r', 3),
  (7, 'c', NULL, NULL, NULL);
SELECT count(DISTINCT v), count(v), count(*), sum(DISTINCT v), avg(DISTINCT v),
       count(DISTINCT x), sum(DISTINCT x)
FROM ad_t;
SELECT grp, count(DISTINCT v) AS dv, count(DISTINCT s) AS ds,
       string_agg(DISTINCT s, ',') AS strs, min(DISTINCT v), max(DISTINCT v)
FROM ad_t GROUP BY grp ORDER BY grp;
SELECT count(DISTINCT grp) FROM ad_t WHERE v IS NOT NULL;
SELECT grp FROM ad_t GROUP BY grp HAVING count(DISTINCT v) > 1;
SELECT count(DISTINCT v) FROM ad_t WHERE false;
DROP TABLE ad_t;
