-- ARRAY[...] and arrays of more types
SELECT ARRAY[1, 2, 3], ARRAY['a', 'b c', NULL, 'd"e'], ARRAY[1.5, 2], ARRAY[true, false];
SELECT ARRAY[1::bigint, 2], ARRAY[1, 2.5::float8], ARRAY[date '2024-01-02'],
  ARRAY[timestamp '2024-01-02 03:04:05'];
SELECT pg_typeof(ARRAY[1]), pg_typeof(ARRAY[1::bigint]), pg_typeof(ARRAY['x']),
  pg_typeof(ARRAY[1.5]), pg_typeof(ARRAY[now()]);
SELECT ARRAY[ARRAY[1, 2], ARRAY[3, 4]], ARRAY[]::int[], ARRAY[]::text[] = '{}';
SELECT ARRAY[1, 2] || ARRAY[3], array_length(ARRAY[4, 5, 6], 1), (ARRAY[7, 8, 9])[2],
  array_length(ARRAY[4], 2), array_upper(ARRAY['a', 'b'], 1);
CREATE TABLE ar (id bigint PRIMARY KEY, name text, score numeric(5,1));
INSERT INTO ar VALUES (1, 'ann', 9.5), (2, 'bob', NULL), (30000000000, 'cy', 7);
SELECT id, name FROM ar WHERE id = ANY (ARRAY[2, 30000000000]) ORDER BY id;
SELECT id FROM ar WHERE name = ANY (ARRAY['ann', 'cy']) ORDER BY id;
SELECT id FROM ar WHERE id = ANY ('{1,2}'::bigint[]) ORDER BY id;
SELECT array_agg(id ORDER BY id), array_agg(score ORDER BY id) FROM ar;
SELECT ARRAY[id, id * 2] FROM ar ORDER BY id;
SELECT ARRAY[name, 'x'] FROM ar ORDER BY id;
SELECT * FROM unnest(ARRAY['p', 'q']) AS t(x);
SELECT array_to_string(ARRAY[1, NULL, 3], ','), array_to_string(ARRAY['a', 'b'], '-');
SELECT ARRAY[];
SELECT ARRAY[1, 'x'];
SELECT ARRAY[1, true];
SELECT CASE WHEN true THEN 1 ELSE false END;
SELECT coalesce(1, 'a'::text);
SELECT greatest(1, now());
DROP TABLE ar;
