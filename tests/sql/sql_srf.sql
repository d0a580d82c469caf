-- Set-returning functions in a SELECT's output list (generate_series(),
-- unnest(), the json ones), run as PostgreSQL's ProjectSet runs them,
-- and generate_series() of numeric and timestamps, with the answers
-- PostgreSQL 15 gives.
SELECT generate_series(1, 3);
SELECT generate_series(1, 3) AS g, generate_series(1, 2) AS h, 'x' AS c;
SELECT generate_series(5, 1, -2), unnest(ARRAY['a', 'b']);
SELECT unnest(ARRAY[1, 2]) * 10 AS u ORDER BY u DESC;
SELECT 'n' || generate_series(1, 2)::text AS label, -generate_series(1, 2) AS neg;
SELECT generate_series(1, 2) IS NULL;
SELECT unnest(ARRAY['b', NULL, 'a']) AS v ORDER BY 1 NULLS FIRST;
SELECT unnest(NULL::int[]);
SELECT unnest('{}'::text[]);
SELECT generate_series(NULL::int, 3);
SELECT generate_series(3, 1);
SELECT pg_catalog.generate_series(1, 2);
SELECT generate_series(1::bigint, 3);
SELECT generate_series(2147483646, 2147483647);
SELECT generate_series(9223372036854775806, 9223372036854775807);
SELECT generate_series(1, 1000000000000) LIMIT 3;
SELECT generate_series(1, 10) OFFSET 7;
SELECT DISTINCT unnest(ARRAY[3, 1, 3, 2]) AS d ORDER BY d;
SELECT count(*) FROM (SELECT generate_series(1, 100000)) s;
EXPLAIN (COSTS OFF) SELECT generate_series(1, 3);
PREPARE srf_q(int, text) AS SELECT generate_series(1, $1) AS i, unnest(ARRAY[$2, $2 || '!']) AS s;
EXECUTE srf_q(3, 'hi');
EXECUTE srf_q(0, 'none');
DEALLOCATE srf_q;
-- over a table's rows: each row once per value, none where there are none
CREATE TABLE srf_t (id int PRIMARY KEY, n int, t1 text, t2 text);
INSERT INTO srf_t VALUES (1, 2, 'red', 'green'), (2, 0, NULL, NULL),
    (3, 3, NULL, 'grey'), (4, 1, 'blue', NULL);
SELECT id, generate_series(1, n) AS k FROM srf_t ORDER BY id, k;
SELECT id, unnest(ARRAY[t1, t2]) AS tag FROM srf_t ORDER BY id;
SELECT id, generate_series(1, n) AS k, unnest(ARRAY[t1, t2]) AS tag FROM srf_t ORDER BY id, k;
SELECT id, unnest(ARRAY[t1, t2]) AS tag FROM srf_t WHERE id < 3 ORDER BY tag;
SELECT tag, count(*) FROM (SELECT unnest(ARRAY[t1, t2]) AS tag FROM srf_t) s GROUP BY tag ORDER BY tag;
SELECT id FROM srf_t WHERE id IN (SELECT generate_series(2, 3)) ORDER BY id;
SELECT (SELECT max(n) FROM srf_t) + generate_series(1, 2) AS m;
SELECT (SELECT generate_series(1, 2));
-- after grouping and window functions, before ORDER BY and LIMIT
SELECT count(*), generate_series(1, 2) FROM srf_t;
SELECT max(n), unnest(ARRAY['a', 'b']) FROM srf_t HAVING max(n) > 0;
SELECT n, count(*), generate_series(1, count(*)::int) AS k FROM srf_t GROUP BY n ORDER BY n, k;
SELECT generate_series(3, 1, -1) AS g, count(*) OVER ();
SELECT row_number() OVER (ORDER BY id), generate_series(1, 2) AS g FROM srf_t WHERE id < 3;
-- INSERT ... SELECT and CREATE TABLE AS
CREATE TABLE srf_u (a int, b text);
INSERT INTO srf_u SELECT generate_series(1, 4), 'row';
INSERT INTO srf_u SELECT id * 10, unnest(ARRAY[t1, t2]) FROM srf_t RETURNING *;
SELECT * FROM srf_u ORDER BY a;
CREATE TABLE srf_v AS SELECT generate_series(1, 3) AS x, 'v' AS y;
SELECT * FROM srf_v;
-- in set operations, WITH and subqueries
SELECT generate_series(1,2) UNION ALL SELECT 5 ORDER BY 1;
WITH x AS (SELECT generate_series(1,3) g) SELECT sum(g) FROM x;
WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT n, generate_series(1, n) FROM r ORDER BY 1, 2;
SELECT * FROM (SELECT generate_series(1,3) g) s WHERE g > 1;
SELECT g FROM (SELECT generate_series(1,3) g) s, LATERAL (SELECT generate_series(1, s.g)) t ORDER BY 1;
SELECT DISTINCT ON (g) g, h FROM (SELECT generate_series(1,2) g, generate_series(1,4) h) s ORDER BY g, h DESC;
SELECT array_agg(g) FROM (SELECT generate_series(1,5) g) s;
SELECT EXISTS (SELECT generate_series(1,0));
SELECT generate_series(1,3) = ANY(ARRAY[2]);
SELECT jsonb_agg(x) FROM (SELECT jsonb_array_elements('[1,{"a":2}]') x) s;
-- json
SELECT jsonb_array_elements('[1, "two", {"x": [3]}, null]');
SELECT json_array_elements_text('[1, "a", null]') AS e, json_object_keys('{"a": 1, "b": 2}') AS k;
SELECT jsonb_object_keys('{"b": 1, "a": 2}');
SELECT id, jsonb_array_elements_text(jsonb_build_array(t1, t2)) AS e FROM srf_t WHERE id <> 2 ORDER BY 1, 2;
-- numeric and timestamps
SELECT generate_series(1.5, 3);
SELECT generate_series(1, 3, 0.5);
SELECT generate_series(0.3, -0.3, -0.15);
SELECT generate_series('2024-01-30'::timestamp, '2024-05-01', '1 month');
SELECT generate_series('2024-01-01 00:00'::timestamp, '2024-01-01 01:00', '20 minutes');
SELECT generate_series(date '2024-02-27', date '2024-03-01', interval '1 day');
SELECT generate_series(timestamptz '2024-01-01 00:00+00', '2024-01-02 00:00+00', '12 hours');
SELECT generate_series('2024-01-03'::timestamp, '2024-01-01', '-1 day');
SELECT * FROM generate_series('2024-01-01'::timestamp, '2024-01-02', '6 hours') AS t(ts);
SELECT * FROM generate_series(1, 2, 0.5) g;
SELECT d::date, count(s.id) FROM generate_series('2024-01-01'::timestamp, '2024-01-03', '1 day') d
    LEFT JOIN srf_t s ON s.id = extract(day FROM d) GROUP BY d ORDER BY d;
-- errors
SELECT generate_series(1, 3, 0);
SELECT generate_series(1.0, 3, 0);
SELECT generate_series('2024-01-01'::timestamp, '2024-01-02', '0 days');
SELECT generate_series('2024-01-01'::timestamp, '2024-01-02');
SELECT generate_series(1.5::float8, 3);
SELECT generate_series(true, false);
SELECT generate_series(1);
SELECT unnest(1);
SELECT unnest(ARRAY[1, 2], ARRAY['a']);
SELECT jsonb_array_elements('{"a": 1}');
SELECT json_object_keys('[1]');
SELECT 1 WHERE generate_series(1, 2) > 1;
SELECT id FROM srf_t JOIN srf_u ON generate_series(1, 2) = srf_u.a;
SELECT 1 HAVING generate_series(1, 2) > 0;
SELECT 1 LIMIT generate_series(1, 2);
SELECT 1 OFFSET unnest(ARRAY[1]);
VALUES (generate_series(1, 2));
SELECT CASE WHEN true THEN generate_series(1, 2) END;
SELECT coalesce(generate_series(1, 2), 0);
SELECT sum(generate_series(1, 3));
SELECT count(*) FILTER (WHERE generate_series(1, 2) > 1) FROM srf_t;
SELECT lag(generate_series(1, 2)) OVER ();
SELECT NOT (unnest(ARRAY[true, false]));
SELECT generate_series(1, 2) > 0 AND true;
SELECT generate_series(1, 2) OVER ();
SELECT generate_series(1, 2) FILTER (WHERE true);
INSERT INTO srf_u VALUES (1, 'x') RETURNING generate_series(1, 2);
UPDATE srf_u SET a = generate_series(1, 2);
DELETE FROM srf_u WHERE a = generate_series(1, 2);
SELECT generate_series(1, 3) / 0;
SELECT generate_series(2147483647, 2147483647) + 1;
DROP TABLE srf_t, srf_u, srf_v;
-- WITH ORDINALITY in FROM
SELECT * FROM generate_series(10, 12) WITH ORDINALITY;
SELECT * FROM unnest(ARRAY['a', 'b', 'c']) WITH ORDINALITY AS u(v, n) ORDER BY n DESC;
SELECT t.x, u.* FROM (VALUES (1), (2)) t(x),
  LATERAL unnest(ARRAY[t.x, t.x * 10]) WITH ORDINALITY u(v, i) ORDER BY 1, 3;
SELECT * FROM jsonb_each('{"a": 1, "b": 2}') WITH ORDINALITY;
SELECT * FROM generate_series(1, 0) WITH ORDINALITY;
SELECT array(SELECT v FROM unnest(ARRAY[3, 1, 2]) WITH ORDINALITY x(v, o)
  ORDER BY o DESC);
