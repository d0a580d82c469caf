-- INSERT ... ON CONFLICT: DO NOTHING and DO UPDATE, with EXCLUDED, WHERE,
-- RETURNING, targets by columns and by constraint name, and the errors.
CREATE TABLE up_t (id int PRIMARY KEY, code text NOT NULL, v text, n int);
CREATE UNIQUE INDEX up_t_code ON up_t (code);
INSERT INTO up_t VALUES (1, 'a', 'one', 1), (2, 'b', 'two', 2);
-- DO NOTHING: any unique index, or the one named.
INSERT INTO up_t VALUES (1, 'x', 'dup id', 0) ON CONFLICT DO NOTHING;
INSERT INTO up_t VALUES (9, 'a', 'dup code', 0) ON CONFLICT DO NOTHING;
INSERT INTO up_t VALUES (3, 'c', 'three', 3), (3, 'c', 'again', 3)
  ON CONFLICT DO NOTHING RETURNING id, v;
INSERT INTO up_t VALUES (1, 'y', 'dup id', 0) ON CONFLICT (id) DO NOTHING;
INSERT INTO up_t VALUES (8, 'a', 'dup code', 0) ON CONFLICT (id) DO NOTHING;
INSERT INTO up_t VALUES (8, 'a', 'dup code', 0) ON CONFLICT (code) DO NOTHING;
SELECT * FROM up_t ORDER BY id;
-- DO UPDATE with EXCLUDED, the table's name or alias, and RETURNING.
INSERT INTO up_t VALUES (1, 'a', 'uno', 10)
  ON CONFLICT (id) DO UPDATE SET v = excluded.v, n = up_t.n + excluded.n
  RETURNING *;
INSERT INTO up_t AS u VALUES (2, 'b', 'dos', 20), (4, 'd', 'four', 4)
  ON CONFLICT (id) DO UPDATE SET v = u.v || '/' || excluded.v
  RETURNING id, v, n;
INSERT INTO up_t VALUES (5, 'c', 'by code', 50)
  ON CONFLICT (code) DO UPDATE SET v = excluded.v, n = excluded.n;
INSERT INTO up_t VALUES (6, 'a', 'by constraint', 60)
  ON CONFLICT ON CONSTRAINT up_t_code DO UPDATE SET n = excluded.n;
-- DO UPDATE ... WHERE: rows it refuses are neither updated nor counted.
INSERT INTO up_t VALUES (1, 'a', 'w', 100), (2, 'b', 'w', 200)
  ON CONFLICT (id) DO UPDATE SET v = excluded.v WHERE up_t.n > 50;
-- Setting the key, and DEFAULT.
INSERT INTO up_t VALUES (4, 'd', 'moved', 4)
  ON CONFLICT (id) DO UPDATE SET id = 40, v = DEFAULT;
SELECT * FROM up_t ORDER BY id;
-- Errors.
INSERT INTO up_t VALUES (1, 'a', 'x', 0) ON CONFLICT (id) DO UPDATE SET v = v;
INSERT INTO up_t VALUES (1, 'a', 'x', 0), (1, 'a', 'y', 0)
  ON CONFLICT (id) DO UPDATE SET v = excluded.v;
INSERT INTO up_t VALUES (70, 'a', 'x', 0) ON CONFLICT (id) DO UPDATE SET v = 'x';
INSERT INTO up_t VALUES (1, 'a', 'x', 0) ON CONFLICT (v) DO NOTHING;
INSERT INTO up_t VALUES (1, 'a', 'x', 0) ON CONFLICT ON CONSTRAINT nosuch DO NOTHING;
INSERT INTO up_t VALUES (1, 'a', 'x', 0) ON CONFLICT DO UPDATE SET v = 'x';
INSERT INTO up_t VALUES (1, 'a', 'x', 0)
  ON CONFLICT (id) DO UPDATE SET code = NULL;
SELECT * FROM up_t ORDER BY id;
-- INSERT ... SELECT, in a transaction that sees its own rows.
BEGIN;
INSERT INTO up_t SELECT g, 'g' || g, 'gen', g FROM generate_series(1, 12) g
  ON CONFLICT (id) DO UPDATE SET n = up_t.n + 1000;
INSERT INTO up_t SELECT g, 'g' || g, 'gen', g FROM generate_series(1, 12) g
  ON CONFLICT (code) DO UPDATE SET n = excluded.n * 2;
COMMIT;
SELECT * FROM up_t ORDER BY id;
SELECT count(*), sum(n) FROM up_t;
DROP TABLE up_t;
