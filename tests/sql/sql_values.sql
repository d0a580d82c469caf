-- VALUES as a query, in FROM, in IN and under INSERT; DEFAULT VALUES.
VALUES (1, 'one'), (2, 'two');
VALUES (3, 'c'), (1, 'a'), (2, 'b') ORDER BY 1 LIMIT 2;
SELECT * FROM (VALUES (1, 'a'), (2, NULL), (3, 'c')) AS v(id, name) WHERE id > 1;
SELECT v.x * 2 AS double, v.column2 FROM (VALUES (1.5, true), (2, false)) v(x);
SELECT 2 IN (VALUES (1), (2)), 5 IN (VALUES (1), (2));
CREATE TABLE vt (id int PRIMARY KEY, label text DEFAULT 'none', n int DEFAULT 7);
INSERT INTO vt SELECT * FROM (VALUES (1, 'x', 1), (2, 'y', 2)) AS s;
INSERT INTO vt (id) VALUES (3);
SELECT t.id, t.label, w.note
FROM vt t JOIN (VALUES (1, 'first'), (3, 'third')) AS w(id, note) ON w.id = t.id
ORDER BY t.id;
VALUES (1, 2), (3);
VALUES (1), ('a');
CREATE TABLE vd (id serial, at text DEFAULT 'now', n int);
INSERT INTO vd DEFAULT VALUES;
INSERT INTO vd DEFAULT VALUES RETURNING *;
SELECT * FROM vd ORDER BY id;
DROP TABLE vt;
DROP TABLE vd;
