CREATE TABLE t (id int PRIMARY KEY, c int NOT NULL, v text); CREATE INDEX t_c ON t (c, v); INSERT INTO t SELECT g, g % 3, 'v' || g FROM generate_series(1, 30) g;
SELECT id FROM t ORDER BY id LIMIT 3 OFFSET 2; SELECT v FROM t WHERE c = 1 ORDER BY v, c LIMIT 2; SELECT id FROM t WHERE id > 5 ORDER BY id;
