-- aggregates with FILTER
CREATE TABLE sale (id int PRIMARY KEY, region text, product text, qty int, price numeric(8,2));
INSERT INTO sale VALUES
  (1, 'north', 'apple', 10, 1.50), (2, 'north', 'pear', 5, 2.00),
  (3, 'south', 'apple', 7, 1.40), (4, 'south', 'apple', NULL, 1.45),
  (5, 'south', 'plum', 3, 3.10), (6, 'east', 'pear', 8, 2.20),
  (7, 'north', 'apple', 2, NULL);
SELECT count(*) AS all_rows,
       count(*) FILTER (WHERE product = 'apple') AS apples,
       sum(qty) FILTER (WHERE region = 'south') AS south_qty,
       avg(price) FILTER (WHERE qty > 4) AS avg_big,
       min(product) FILTER (WHERE region <> 'north') AS first_product,
       string_agg(region, ',') FILTER (WHERE qty IS NULL OR qty < 5) AS small
FROM sale;
SELECT region,
       count(*) FILTER (WHERE product = 'apple') AS apples,
       count(DISTINCT product) FILTER (WHERE qty IS NOT NULL) AS kinds,
       sum(qty * price) FILTER (WHERE price IS NOT NULL) AS revenue
FROM sale GROUP BY region ORDER BY region;
-- a FILTER that lets nothing in
SELECT count(*) FILTER (WHERE false), sum(qty) FILTER (WHERE id > 100), max(id) FILTER (WHERE NULL) FROM sale;
-- HAVING on a filtered aggregate
SELECT region FROM sale GROUP BY region HAVING count(*) FILTER (WHERE product = 'apple') >= 2 ORDER BY 1;
-- over a window
SELECT id, region, count(*) FILTER (WHERE product = 'apple') OVER (PARTITION BY region ORDER BY id) AS apples_so_far,
       sum(qty) FILTER (WHERE qty > 4) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS big_near
FROM sale ORDER BY id;
-- errors
SELECT count(*) FILTER (WHERE qty) FROM sale;
SELECT count(*) FILTER (WHERE count(*) > 1) FROM sale;
SELECT row_number() FILTER (WHERE qty > 1) OVER () FROM sale;
SELECT lower(region) FILTER (WHERE true) FROM sale;
SELECT upper(DISTINCT 'a');
SELECT abs(1 ORDER BY 1);
DROP TABLE sale;
