-- json and jsonb: input, canonical output, operators, functions, columns
-- and aggregates, with the answers PostgreSQL 15 gives.
SELECT '{"b": 1, "a": [1, 2.50, 1e2, -0, 1.5E-3, "x\ty"], "aa": null, "b": {"z": true}}'::jsonb;
SELECT '{"b": 1, "a": [1, 2.50]}'::json, '  [1,2] '::json, 'null'::jsonb, '"\u00e9\n"'::jsonb, '123.4500'::jsonb;
SELECT '{"a": "\u0041\ud83d\ude00", "\"k\"": "\\/"}'::jsonb, '"\u0000"'::json;
SELECT '{"a":}'::jsonb;
SELECT '{"a" 1}'::json;
SELECT '[1, 2'::json;
SELECT '[1 2]'::json;
SELECT '{"a":1,}'::jsonb;
SELECT '{1:2}'::jsonb;
SELECT 'tru'::json;
SELECT '01'::jsonb;
SELECT '-'::jsonb;
SELECT '"abc'::json;
SELECT '"\u0000"'::jsonb;
SELECT '"\x"'::json;
SELECT '"\u12"'::json;
SELECT '{"a": 1} x'::jsonb;
SELECT '{"long": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "b": ]}'::jsonb;
SELECT '[1,
2,
oops]'::jsonb;
SELECT E'"tab\there"'::json;
-- Operators.
SELECT '{"a": {"b": [10, 20, {"c": "d"}]}}'::jsonb -> 'a' -> 'b' -> 2 ->> 'c', '[1,2,3]'::jsonb -> -1, '[1,2,3]'::jsonb -> 3, '{"a":1}'::json -> 'a';
SELECT '{"a": [1,  2]}'::json -> 'a', '{"a": [1,  2]}'::jsonb -> 'a', '{"a": "x"}'::json ->> 'a', '{"a": null}'::jsonb ->> 'a', '{"a": null}'::jsonb -> 'a';
SELECT '[1, "2", {"k": [3]}]'::jsonb ->> 2, '"str"'::jsonb -> 0, '"str"'::jsonb ->> -1, '"str"'::jsonb -> 1, '{"a": 1}'::jsonb -> 0, '[1]'::jsonb -> 'a', '"s"'::json -> 0, '5'::jsonb #> '{0}';
SELECT '{"a": {"b": [10, 20]}}'::jsonb #> '{a,b,1}', '{"a": {"b": [10, 20]}}'::json #>> '{a,b}', '{"a": 1}'::jsonb #> '{}', '{"a": [1]}'::jsonb #> '{a,x}', '{"a": [1]}'::jsonb #>> '{a,-1}';
SELECT '{"a":1, "b":[1,2]}'::jsonb @> '{"b":[2]}', '[1,2]'::jsonb @> '1', '1'::jsonb @> '[1]', '{"a":1}'::jsonb <@ '{"a":1,"b":2}', '[[1,2]]'::jsonb @> '[[2]]', '[{"a":1,"b":2}]'::jsonb @> '[{"a":1}]', '{"a":{"b":1}}'::jsonb @> '{"a":{}}', '{"a":1}'::jsonb @> '{"a":1.00}';
SELECT '{"a":1}'::jsonb ? 'a', '["a", "b"]'::jsonb ? 'b', '["a"]'::jsonb ? 'c', '"a"'::jsonb ? 'a', '{"x": {"a": 1}}'::jsonb ? 'a';
SELECT '{"a":1}'::json @> '{"a":1}'::json;
SELECT '{"a":1}'::jsonb -> 1.5;
SELECT '{"a":1}'::json = '{"a":1}'::json;
SELECT '{"a":1.0}'::jsonb = '{"a":1}'::jsonb, '{"a":1, "b":2}'::jsonb = '{"b":2, "a":1}'::jsonb, '[1,2]'::jsonb <> '[2,1]'::jsonb;
SELECT '[]'::jsonb < 'null'::jsonb, '1'::jsonb < '[1]'::jsonb, '[1,2]'::jsonb > '5'::jsonb, 'null'::jsonb < '""'::jsonb, '""'::jsonb < '0'::jsonb, '0'::jsonb < 'false'::jsonb, 'true'::jsonb < '[]'::jsonb, '[[]]'::jsonb < '{}'::jsonb, '{"b":1}'::jsonb < '{"aa":1}'::jsonb, '{"a":2}'::jsonb > '{"a":1,"b":0}'::jsonb;
-- Functions.
SELECT jsonb_typeof('[]'), json_typeof('1.5'), jsonb_typeof('{"a":1}'::jsonb -> 'a'), json_typeof('"s"'), jsonb_typeof('null'), jsonb_typeof('false');
SELECT jsonb_array_length('[1,2,3]'), json_array_length('[]'), jsonb_array_length('[[1],[2]]'::jsonb -> 0);
SELECT '{"a":1}' -> 'a';
SELECT json_array_length('{}');
SELECT jsonb_array_length('5');
SELECT jsonb_build_object('a', 1, 'b', 'x', 'c', NULL, 'd', true, 'e', 1.50, 'a', 2), json_build_object('a', 1, 'b', '2024-02-29'::date), json_build_array(1, 'two', null, 2.5::float8), jsonb_build_array(), json_build_object();
SELECT jsonb_build_object('a', '{"x": [1]}'::jsonb, 'b', '[1,  2]'::json), json_build_object('k', '{"x":  1}'::json), jsonb_build_object(1, 2);
SELECT jsonb_build_object('a');
SELECT json_build_object(NULL, 1);
SELECT to_jsonb('2024-01-01 10:00:00.5'::timestamp), to_json('2024-01-01 10:00'::timestamptz), to_json('2024-01-01'::date), to_json(ARRAY[1,2]), to_jsonb(ARRAY['a', NULL]), to_json('x"y'::text), to_json(12.50), to_json('NaN'::float8), to_json(true), to_json(NULL::int);
SELECT to_jsonb('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid), to_json('{"a": 1}'::jsonb), to_jsonb('{"b":1, "a":2}'::json);
SELECT '{"b":1, "a":2}'::json::jsonb, '{"b":1, "a":2}'::jsonb::json, '[1, 2]'::jsonb::text, pg_typeof('{}'::jsonb), pg_typeof('{}'::json -> 'a');
-- Columns.
CREATE TABLE events (id int PRIMARY KEY, kind text, body jsonb, raw json, tags jsonb DEFAULT jsonb_build_array());
\d events
SELECT attname, format_type(atttypid, atttypmod), attstorage FROM pg_attribute WHERE attrelid = 'events'::regclass AND attnum > 0 ORDER BY attnum;
INSERT INTO events VALUES
  (1, 'click', '{"user": {"id": 7, "name": "ann"}, "x": 10, "y": 20}', '{"user": {"id": 7},  "x": 10}', '["a", "b"]'),
  (2, 'view', '{"user": {"id": 8, "name": "bob"}, "page": "/home"}', '[1, 2, 3]', DEFAULT),
  (3, 'click', '{"user": {"id": 7, "name": "ann"}, "x": 5}', NULL, '["b"]'),
  (4, 'buy', '{"user": {"id": 9}, "total": 12.50, "items": [{"sku": "a1", "qty": 2}, {"sku": "b2", "qty": 1}]}', '"text"', '["a"]');
INSERT INTO events VALUES (5, 'bad', '{"unclosed": ', NULL, DEFAULT);
INSERT INTO events (id, body) VALUES (6, 42) ;
SELECT id, body ->> 'x' AS x, body -> 'user' ->> 'name' AS name, raw -> 'x' AS raw_x, tags FROM events ORDER BY id;
SELECT id FROM events WHERE body @> '{"user": {"id": 7}}' ORDER BY id;
SELECT id FROM events WHERE tags ? 'a' ORDER BY id;
SELECT id, (body ->> 'x')::int * 2 AS doubled FROM events WHERE body ? 'x' ORDER BY id;
SELECT body #>> '{items,0,sku}', jsonb_array_length(body -> 'items') FROM events WHERE kind = 'buy';
SELECT body -> 'user' ->> 'id' AS uid, count(*), sum((body ->> 'x')::int) FROM events GROUP BY body -> 'user' ->> 'id' ORDER BY uid;
SELECT json_agg(id ORDER BY id), jsonb_agg(kind), json_agg(raw ORDER BY id), jsonb_agg(body -> 'x' ORDER BY id) FROM events;
SELECT kind, jsonb_agg(body -> 'user' -> 'id' ORDER BY id) FROM events GROUP BY kind ORDER BY kind;
SELECT json_agg(x) FROM events WHERE id > 100;
SELECT DISTINCT body -> 'user' AS u FROM events ORDER BY u;
SELECT id, body FROM events ORDER BY body LIMIT 2;
COPY events (id, body, raw) TO STDOUT;
UPDATE events SET body = jsonb_build_object('user', body -> 'user', 'seen', true) WHERE id = 3 RETURNING body;
SELECT jsonb_build_object('id', id, 'kind', kind, 'tags', tags) FROM events ORDER BY id;
CREATE INDEX events_raw ON events (raw);
CREATE TABLE jcopy (j jsonb, t json);
COPY jcopy FROM STDIN;
{"b": 2, "a": "tab\\there"}	[1,  2]
\N	{}
\.
COPY jcopy FROM STDIN WITH (FORMAT csv);
"{""q"": ""x""}","[3]"
\.
SELECT j, t FROM jcopy ORDER BY j;
COPY jcopy TO STDOUT WITH (FORMAT csv);
COPY jcopy FROM STDIN;
{"broken"	[]
\.
DROP TABLE jcopy;
DROP TABLE events;
