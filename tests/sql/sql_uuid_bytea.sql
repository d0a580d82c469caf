-- uuid and bytea: input forms, output, keys, functions and COPY, with the
-- answers PostgreSQL 15 gives.
SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid, '{A0EEBC999C0B4EF8BB6D6BB9BD380A11}'::uuid, 'a0eebc999c0b4ef8bb6d6bb9bd380a11'::uuid, 'a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11'::uuid;
SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1'::uuid;
SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11x'::uuid;
SELECT '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid;
SELECT 'a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11'::uuid;
SELECT ' a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid;
SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid < 'b0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid, '00000000-0000-0000-0000-000000000000'::uuid = '0000000000000000-0000000000000000'::uuid;
SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::text;
SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid::text, length('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid::varchar);
SELECT '\x0102fF'::bytea, '\x 01 02 '::bytea, ''::bytea, 'abc'::bytea, 'a\\b\000\377'::bytea, '\\x'::bytea;
SELECT '\x0g'::bytea;
SELECT '\x012'::bytea;
SELECT 'a\b'::bytea;
SELECT 'a\8'::bytea;
SELECT '\x01'::bytea < '\x0100'::bytea, '\x02'::bytea > '\x0100'::bytea, 'abc'::bytea = '\x616263';
SELECT '\x01'::bytea || '\x02'::bytea, '\x01'::bytea || '\x', length('\x010203'::bytea), octet_length('\x0102'::bytea), bit_length('\x0102'::bytea);
SELECT 'abc'::bytea || 'd'::text;
SELECT encode('\x00015c7f80ff'::bytea, 'hex'), encode('\x00015c7f80ff'::bytea, 'escape'), encode('abc', 'base64');
SELECT encode('\x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f'::bytea, 'base64');
SELECT decode('41 42', 'hex'), decode('YWJj', 'base64'), decode('YW Jj
ZA==', 'base64'), decode('a\\b\101', 'escape'), decode('', 'base64');
SELECT decode('\x41', 'escape');
SELECT decode('4', 'hex');
SELECT decode('YWJ', 'base64');
SELECT decode('YW*j', 'base64');
SELECT encode('abc', 'rot13');
SELECT md5('abc'::bytea), sha224('abc'), sha256('abc'::bytea), sha384(''), sha512('\x00'::bytea);
SELECT pg_typeof(gen_random_uuid()), pg_typeof('\x00'::bytea), pg_typeof(sha256('')), pg_typeof(encode('', 'hex'));
-- gen_random_uuid(): version 4, RFC 4122's variant, a new one each row.
SELECT substr(u::text, 15, 1) AS version, substr(u::text, 20, 1) IN ('8', '9', 'a', 'b') AS variant FROM (SELECT gen_random_uuid() AS u) x;
SELECT count(DISTINCT gen_random_uuid()) FROM generate_series(1, 200);
CREATE TABLE docs (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), owner uuid NOT NULL, body bytea, n int);
\d docs
SELECT column_name, data_type, udt_name FROM information_schema.columns WHERE table_name = 'docs' ORDER BY ordinal_position;
SELECT attname, format_type(atttypid, atttypmod), attlen FROM pg_attribute WHERE attrelid = 'docs'::regclass AND attnum > 0 ORDER BY attnum;
INSERT INTO docs (id, owner, body, n) VALUES
  ('11111111-1111-4111-8111-111111111111', 'aaaaaaaa-0000-4000-8000-000000000001', '\xdeadbeef', 1),
  ('22222222-2222-4222-8222-222222222222', 'aaaaaaaa-0000-4000-8000-000000000002', 'plain text', 2),
  ('33333333-3333-4333-8333-333333333333', 'aaaaaaaa-0000-4000-8000-000000000001', NULL, 3),
  ('ffffffff-ffff-4fff-8fff-ffffffffffff', 'aaaaaaaa-0000-4000-8000-000000000002', '', 4);
INSERT INTO docs (owner, n) VALUES ('aaaaaaaa-0000-4000-8000-000000000003', 5) RETURNING length(id::text), n;
INSERT INTO docs (id, owner) VALUES ('11111111-1111-4111-8111-111111111111', 'aaaaaaaa-0000-4000-8000-000000000001');
INSERT INTO docs (id, owner) VALUES ('not a uuid', 'aaaaaaaa-0000-4000-8000-000000000001');
INSERT INTO docs (id, owner) VALUES (7, 'aaaaaaaa-0000-4000-8000-000000000001');
SELECT id, owner, body, n FROM docs WHERE n < 5 ORDER BY id DESC;
SELECT n, body FROM docs WHERE id = '22222222-2222-4222-8222-222222222222';
SELECT n FROM docs WHERE id IN ('33333333-3333-4333-8333-333333333333', 'ffffffff-ffff-4fff-8fff-ffffffffffff') ORDER BY n;
SELECT n FROM docs WHERE id > '22222222-2222-4222-8222-222222222222' AND n < 5 ORDER BY id;
SELECT n FROM docs WHERE id = ANY ('{11111111-1111-4111-8111-111111111111,33333333-3333-4333-8333-333333333333}'::uuid[]) ORDER BY n;
SELECT owner, count(*), sum(n) FROM docs GROUP BY owner ORDER BY owner;
SELECT n, body FROM docs WHERE body = '\xdeadbeef' OR body = 'plain text' ORDER BY body;
SELECT n, octet_length(body), encode(body, 'hex') FROM docs WHERE body IS NOT NULL ORDER BY body;
CREATE INDEX docs_body ON docs (body);
SELECT n FROM docs WHERE body >= '\x70' ORDER BY body;
CREATE TABLE owners (id uuid PRIMARY KEY, name text);
INSERT INTO owners VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'ann'), ('aaaaaaaa-0000-4000-8000-000000000002', 'bob');
SELECT o.name, d.n FROM docs d JOIN owners o ON o.id = d.owner ORDER BY d.n;
SELECT o.name, count(d.n) FROM owners o LEFT JOIN docs d ON d.owner = o.id GROUP BY o.name ORDER BY o.name;
UPDATE docs SET id = '44444444-4444-4444-8444-444444444444', body = body || '\x00' WHERE n = 1 RETURNING id, body;
DELETE FROM docs WHERE id = '44444444-4444-4444-8444-444444444444' RETURNING n;
ALTER TABLE owners ADD COLUMN token uuid NOT NULL DEFAULT gen_random_uuid();
SELECT count(DISTINCT token), count(*) FROM owners;
CREATE TABLE blobs (k uuid, v bytea);
COPY blobs FROM STDIN;
01234567-89ab-4def-8123-456789abcdef	\\x00ff
11234567-89ab-4def-8123-456789abcdef	\\000\\001abc
21234567-89ab-4def-8123-456789abcdef	\N
\.
COPY blobs FROM STDIN WITH (FORMAT csv);
31234567-89ab-4def-8123-456789abcdef,\x414243
41234567-89ab-4def-8123-456789abcdef,
\.
SELECT k, v FROM blobs ORDER BY k;
COPY blobs TO STDOUT;
COPY blobs (v, k) TO STDOUT WITH (FORMAT csv, HEADER);
COPY blobs FROM STDIN;
not-a-uuid	\\x00
\.
SELECT '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,NULL}'::uuid[], ARRAY['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid];
-- A unique violation shows its key as the types print, uuid and bytea
-- among them.
CREATE TABLE keys (d date, t timestamp, z timestamptz, f float8, b bool, n numeric, c char(4), u uuid, PRIMARY KEY (d, t, z, f, b, n, c, u));
INSERT INTO keys VALUES ('2024-02-29', '2024-02-29 12:34:56.5', '2024-02-29 12:34:56+00', 0.1, true, 1.50, 'ab', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11');
INSERT INTO keys VALUES ('2024-02-29', '2024-02-29 12:34:56.5', '2024-02-29 12:34:56+00', 0.1, true, 1.50, 'ab', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11');
CREATE UNIQUE INDEX blobs_v ON blobs (v);
INSERT INTO blobs VALUES (NULL, '\x00ff');
DROP TABLE keys;
DROP TABLE blobs;
DROP TABLE owners;
DROP TABLE docs;
