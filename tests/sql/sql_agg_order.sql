-- ORDER BY inside aggregates, and array_agg
CREATE TABLE pet (id int PRIMARY KEY, owner text, name varchar(20), age int);
INSERT INTO pet VALUES (1, 'ann', 'rex', 5), (2, 'ann', 'bo', 2), (3, 'bob', 'tom', 9),
  (4, 'ann', 'cy', NULL), (5, 'bob', 'al', 1), (6, 'cid', NULL, 4), (7, 'ann', 'bo', 7);
SELECT owner, string_agg(name, ', ' ORDER BY name) AS by_name,
       string_agg(name, ', ' ORDER BY age DESC NULLS LAST, id) AS by_age,
       array_agg(id ORDER BY id DESC) AS ids,
       array_agg(age ORDER BY age NULLS FIRST) AS ages
FROM pet GROUP BY owner ORDER BY owner;
SELECT array_agg(name) AS names, array_agg(DISTINCT name) AS distinct_names,
       array_agg(DISTINCT age ORDER BY age DESC) AS ages_desc,
       string_agg(DISTINCT name, '/' ORDER BY name DESC) AS names_desc,
       array_agg(id) FILTER (WHERE age > 3) AS old
FROM pet;
SELECT array_agg(x) FROM (VALUES ('a b'), (NULL), ('c"d'), ('NULL'), (''), ('e\f')) v(x);
SELECT owner, array_agg(id ORDER BY id) FROM pet WHERE id > 100 GROUP BY owner;
SELECT array_agg(id), string_agg(name, ',' ORDER BY id) FROM pet WHERE id > 100;
SELECT id, array_agg(id) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM pet ORDER BY id;
SELECT owner, (array_agg(name ORDER BY age DESC NULLS LAST))[1] AS oldest FROM pet GROUP BY owner ORDER BY 1;
-- errors
SELECT string_agg(DISTINCT name, ',' ORDER BY age) FROM pet;
SELECT array_agg(id ORDER BY id) OVER () FROM pet;
SELECT array_agg(id, name) FROM pet;
DROP TABLE pet;
