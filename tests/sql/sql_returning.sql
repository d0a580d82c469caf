-- RETURNING: rows of INSERT, UPDATE and DELETE, then their command tags
CREATE TABLE ret (x int PRIMARY KEY, y text, z int);
INSERT INTO ret VALUES (1, 'a', 10), (2, 'b', 20) RETURNING *;
INSERT INTO ret VALUES (3, 'c', NULL) RETURNING x * 10 AS ten, y || '!', z IS NULL;
INSERT INTO ret (x, y) SELECT x + 10, y FROM ret WHERE x < 3 RETURNING x, ret.y;
UPDATE ret SET y = y || y, z = coalesce(z, 0) + 1 WHERE x < 3 RETURNING *, x + 1;
UPDATE ret SET z = 5 WHERE x = 99 RETURNING *;
DELETE FROM ret WHERE x > 10 RETURNING y, x;
DELETE FROM ret WHERE x = 99 RETURNING *;
SELECT * FROM ret ORDER BY x;
BEGIN;
DELETE FROM ret WHERE x = 3 RETURNING x, y;
ROLLBACK;
SELECT count(*) FROM ret;
-- errors
INSERT INTO ret VALUES (5, 'e') RETURNING count(*);
INSERT INTO ret VALUES (6, 'f') RETURNING nosuch;
UPDATE ret SET z = 1 RETURNING other.x;
INSERT INTO ret VALUES (1, 'dup') RETURNING x;
DROP TABLE ret;
