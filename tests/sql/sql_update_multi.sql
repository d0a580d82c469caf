-- UPDATE ... SET (a, b) = (x, y)
CREATE TABLE ms (id int PRIMARY KEY, a int, b text, c int DEFAULT 7);
INSERT INTO ms VALUES (1, 1, 'x', 0), (2, 2, 'y', 0);
UPDATE ms SET (a, b) = (a * 10, b || '!') WHERE id = 1;
UPDATE ms SET (c, a) = (DEFAULT, 5), b = 'z' WHERE id = 2 RETURNING *;
UPDATE ms SET (a) = ROW(42) WHERE id = 1;
SELECT * FROM ms ORDER BY id;
INSERT INTO ms VALUES (1, 0, 'dup', 0) ON CONFLICT (id) DO UPDATE SET (a, b) = (EXCLUDED.a + 100, EXCLUDED.b);
SELECT * FROM ms ORDER BY id;
UPDATE ms SET (a, b) = (1, 'p', 3);
UPDATE ms SET (a, a) = (1, 2);
DROP TABLE ms;
