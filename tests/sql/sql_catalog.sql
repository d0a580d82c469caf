-- pg_catalog's views over keel's catalogs, the queries pgbench and psql
-- send to them, and the FROM clauses those need: subqueries, LATERAL,
-- joins nested on their right side.  The answers are PostgreSQL 15's.
--
-- pgbench, before a run, asks where pgbench_accounts is in the search
-- path and whether it is partitioned: no such table yet...
select o.n, p.partstrat, pg_catalog.count(i.inhparent) from pg_catalog.pg_class as c join pg_catalog.pg_namespace as n on (n.oid = c.relnamespace) cross join lateral (select pg_catalog.array_position(pg_catalog.current_schemas(true), n.nspname)) as o(n) left join pg_catalog.pg_partitioned_table as p on (p.partrelid = c.oid) left join pg_catalog.pg_inherits as i on (c.oid = i.inhparent) where c.relname = 'pgbench_accounts' and o.n is not null group by 1, 2 order by 1 asc limit 1;
-- ...in public, second in the path after pg_catalog, not partitioned...
CREATE TABLE pgbench_accounts (aid int PRIMARY KEY, bid int, abalance int, filler char(84));
select o.n, p.partstrat, pg_catalog.count(i.inhparent) from pg_catalog.pg_class as c join pg_catalog.pg_namespace as n on (n.oid = c.relnamespace) cross join lateral (select pg_catalog.array_position(pg_catalog.current_schemas(true), n.nspname)) as o(n) left join pg_catalog.pg_partitioned_table as p on (p.partrelid = c.oid) left join pg_catalog.pg_inherits as i on (c.oid = i.inhparent) where c.relname = 'pgbench_accounts' and o.n is not null group by 1, 2 order by 1 asc limit 1;
-- ...and in a schema off the path: not found.
DROP TABLE pgbench_accounts;
CREATE SCHEMA cat_other;
CREATE TABLE cat_other.pgbench_accounts (aid int PRIMARY KEY);
select o.n, p.partstrat, pg_catalog.count(i.inhparent) from pg_catalog.pg_class as c join pg_catalog.pg_namespace as n on (n.oid = c.relnamespace) cross join lateral (select pg_catalog.array_position(pg_catalog.current_schemas(true), n.nspname)) as o(n) left join pg_catalog.pg_partitioned_table as p on (p.partrelid = c.oid) left join pg_catalog.pg_inherits as i on (c.oid = i.inhparent) where c.relname = 'pgbench_accounts' and o.n is not null group by 1, 2 order by 1 asc limit 1;
DROP TABLE cat_other.pgbench_accounts;
DROP SCHEMA cat_other;
SELECT current_schemas(true), current_schemas(false),
       array_position(current_schemas(true), 'public') AS public_at,
       array_position(current_schemas(true), 'nosuch') AS nosuch_at,
       array_to_string(current_schemas(true), ', ');

-- The views, over tables of a schema of the test's own.
CREATE SCHEMA cat;
CREATE TABLE cat.t (a int PRIMARY KEY, b text NOT NULL, c bigint, d char(3),
    e name, f boolean, g double precision, h timestamp, i date, j smallint,
    k timestamptz, l oid);
CREATE INDEX t_c ON cat.t (c);
CREATE UNIQUE INDEX t_b ON cat.t (b);
CREATE TABLE cat.u (x int, y text);
SELECT c.relname, c.relkind, c.relhasindex, c.relpersistence,
       c.relispartition, c.relam, am.amname, c.relnatts,
       pg_get_userbyid(c.relowner) = current_user AS mine
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_am am ON am.oid = c.relam
WHERE n.nspname = 'cat' ORDER BY 1;
SELECT a.attnum, a.attname, format_type(a.atttypid, a.atttypmod) AS type,
       t.typname, a.attlen, a.attnotnull, a.attisdropped
FROM pg_catalog.pg_attribute a
     JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
     JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
WHERE n.nspname = 'cat' AND c.relname = 't' AND a.attnum > 0
ORDER BY a.attnum;
SELECT ic.relname AS index, tc.relname AS "table", i.indisunique,
       i.indisprimary, i.indnatts, i.indisvalid
FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
     JOIN pg_class tc ON tc.oid = i.indrelid
     JOIN pg_namespace n ON n.oid = tc.relnamespace
WHERE n.nspname = 'cat' ORDER BY 1;
SELECT nspname, pg_get_userbyid(nspowner) AS owner FROM pg_namespace
WHERE nspname IN ('public', 'cat') ORDER BY 1;
SELECT datname = current_database() AS this_one,
       pg_get_userbyid(datdba) = current_user AS mine,
       pg_encoding_to_char(encoding) AS encoding, datallowconn,
       datistemplate, array_to_string(datacl, ',') AS acl
FROM pg_database WHERE datname = current_database();
SELECT rolname = current_user AS me, rolsuper, rolcanlogin FROM pg_roles
WHERE rolname = current_user;
SELECT oid, typname, typlen, typbyval FROM pg_type
WHERE oid IN (16, 19, 20, 21, 23, 25, 26, 701, 1042, 1082, 1114, 1184)
ORDER BY oid;
SELECT count(*) FROM pg_inherits;
SELECT count(*) FROM pg_partitioned_table;
-- Visible: found by its unqualified name.
CREATE TABLE cat_visible (x int);
SELECT c.relname, n.nspname, pg_table_is_visible(c.oid)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname IN ('cat_visible', 't', 'u') ORDER BY 1;
DROP TABLE cat_visible;

-- psql's describing commands.
\dt cat.*
\di cat.*
\dn cat
\dt cat.nosuch
\d cat.t
\d cat.u
\d cat.nosuch
-- Defaults and varchar(n), as \d and pg_attribute show them.
CREATE TABLE cat.v (a int PRIMARY KEY DEFAULT 5, b text DEFAULT 'x',
    c varchar(10) DEFAULT 'y', d timestamptz DEFAULT now(), e char(2));
\d cat.v
SELECT a.attname, a.atthasdef, format_type(a.atttypid, a.atttypmod)
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
WHERE c.relname = 'v' AND a.attnum > 0 ORDER BY a.attnum;
DROP TABLE cat.v;

-- Expressions those queries use.
SELECT 'pg_toast' ~ '^pg_', 'public' !~ '^pg_', 'ABC' ~* 'b', 'ABC' !~* 'b',
       'abc' OPERATOR(pg_catalog.~) '^(abc)$' COLLATE pg_catalog.default;
SELECT quote_ident('abc'), quote_ident('Abc'), quote_ident('a"b'),
       quote_ident('1x'), format_type(1042, 8), format_type(23, NULL),
       format_type(1043, -1);
SELECT split_part('1 2 3', ' ', 1), split_part('1 2 3', ' ', 4),
       split_part('1 2 3', ' ', -1), split_part('a~@~b~@~c', '~@~', 2),
       split_part('', ',', 1), split_part('abc', '', 1),
       split_part('a,,b', ',', 2);
SELECT split_part('a', ',', 0);
SELECT CASE c.relkind WHEN 'r' THEN 'table' WHEN 'i' THEN 'index' END
FROM pg_catalog.pg_class c WHERE c.relname = 'u';

-- Subqueries in FROM, with and without column aliases.
INSERT INTO cat.u VALUES (1, 'one'), (2, 'two'), (3, 'three');
INSERT INTO cat.t (a, b, c) VALUES (10, 'ten', 1), (20, 'twenty', 1),
    (30, 'thirty', 2);
SELECT * FROM (SELECT x, y FROM cat.u WHERE x > 1) AS s ORDER BY x;
SELECT s.p, s.q FROM (SELECT x, y FROM cat.u) AS s(p, q) ORDER BY 1 DESC;
SELECT s.* FROM (SELECT x, y FROM cat.u) s(p) ORDER BY 1;
SELECT s.c, s.n FROM (SELECT c, count(*) AS n FROM cat.t GROUP BY c) s
ORDER BY 1;
SELECT u.y, s.one FROM cat.u, (SELECT 1 AS one) s WHERE u.x = s.one;
SELECT count(*) FROM (SELECT * FROM cat.t) s GROUP BY s.c ORDER BY 1;
-- LATERAL: run for each row before it, seeing its columns.
SELECT u.x, l.n FROM cat.u CROSS JOIN LATERAL
    (SELECT count(*) AS n FROM cat.t WHERE t.c = u.x) l ORDER BY 1;
SELECT u.x, l.b FROM cat.u LEFT JOIN LATERAL
    (SELECT t.b FROM cat.t WHERE t.c = u.x) l ON true ORDER BY 1, 2;
SELECT u.x, l.twice FROM cat.u, LATERAL (SELECT u.x * 2 AS twice) l
ORDER BY 1;
-- Joins nested on their right side.
SELECT u.y, t.b, v.y AS again FROM cat.u
    LEFT JOIN (cat.t JOIN cat.u v ON v.x = t.c) ON t.c = u.x
ORDER BY 1, 2;
SELECT u.x, t.a FROM cat.u JOIN (cat.t CROSS JOIN cat.u w) ON w.x = t.c
    AND w.x = u.x ORDER BY 1, 2;
-- Subqueries in expressions, = ANY over arrays.
SELECT u.y, (SELECT count(*) FROM cat.t WHERE t.c = u.x) AS n,
       EXISTS (SELECT 1 FROM cat.t WHERE t.c = u.x),
       ARRAY(SELECT t.b FROM cat.t WHERE t.c = u.x ORDER BY 1),
       (SELECT t.a FROM cat.t WHERE t.a = 99)
FROM cat.u ORDER BY 1;
SELECT y FROM cat.u WHERE x IN (SELECT c FROM cat.t) ORDER BY 1;
SELECT y FROM cat.u WHERE x NOT IN (SELECT c FROM cat.t) ORDER BY 1;
SELECT count(*), (SELECT max(a) FROM cat.t) FROM cat.u;
SELECT (SELECT a FROM cat.t);
SELECT 10 = ANY('{1,10}'::int[]), 'q' = ANY('{"a b",q}'::name[]),
       3 = ANY('{1,NULL}'::oid[]), ARRAY(SELECT y FROM cat.u ORDER BY x);
SELECT c.relname FROM pg_class c
WHERE c.oid = ANY(ARRAY(SELECT i.indexrelid FROM pg_index i
                        JOIN pg_class t ON t.oid = i.indrelid
                        WHERE t.relname = 't' AND i.indisunique))
ORDER BY 1;

DROP TABLE cat.t;
DROP TABLE cat.u;
DROP SCHEMA cat;

-- Object sizes.  A relation's size is what its file holds; keel's pages
-- are not PostgreSQL's, so sizes are compared here, not shown, except
-- for tables without a row, which have no block in either (0 bytes).
CREATE SCHEMA sz;
CREATE TABLE sz.e (a int PRIMARY KEY, b char(4));
CREATE TABLE sz.f (x bigint, y double precision, z numeric(10,2));
CREATE INDEX f_x ON sz.f (x);
CREATE TABLE sz.m (n int, o oid, s bigint);
-- psql's + forms over tables without a row: no block, 0 bytes.
\dt+ sz.*
\d+ sz.e
\d+ sz.f
\d+ sz.e_pkey
\d sz.f_x
SELECT pg_relation_size('sz.e'), pg_table_size('sz.e'),
       pg_relation_size('sz.f', 'main'), pg_relation_size('sz.e', 'fsm'),
       pg_relation_size('sz.e', 'vm'), pg_relation_size('sz.e', 'init');
SELECT pg_indexes_size('sz.e') > 0 AS indexed,
       pg_total_relation_size('sz.e') =
           pg_table_size('sz.e') + pg_indexes_size('sz.e') AS adds_up,
       pg_indexes_size('sz.e_pkey') AS of_an_index,
       pg_table_size('sz.e_pkey') = pg_relation_size('sz.e_pkey') AS same,
       pg_total_relation_size('sz.e_pkey') = pg_relation_size('sz.e_pkey')
           AS total_same;
-- By oid, as psql asks: NULL for an oid that names nothing.
SELECT c.relname, pg_table_size(c.oid) = pg_relation_size(c.oid) AS same,
       pg_total_relation_size(c.oid) >= pg_table_size(c.oid) AS ge
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'sz' ORDER BY 1;
SELECT pg_relation_size(0), pg_table_size(0::oid), pg_indexes_size(0::bigint),
       pg_total_relation_size(0), pg_relation_size(NULL),
       pg_relation_size('sz.e', NULL);
-- Rows grow the file: compared with the size before them, read without
-- a checkpoint (a block is in the file once the table grows by it).
INSERT INTO sz.m SELECT 1, 0, pg_relation_size('sz.e');
INSERT INTO sz.e SELECT g, 'row' FROM generate_series(1, 2000) g;
INSERT INTO sz.m SELECT 2, 0, pg_relation_size('sz.e');
INSERT INTO sz.m SELECT 3, 0, pg_indexes_size('sz.e');
INSERT INTO sz.e SELECT g, 'more' FROM generate_series(2001, 4000) g;
INSERT INTO sz.m SELECT 4, 0, pg_relation_size('sz.e');
INSERT INTO sz.m SELECT 5, 0, pg_indexes_size('sz.e');
SELECT (SELECT s FROM sz.m WHERE n = 1) AS empty,
       (SELECT s FROM sz.m WHERE n = 2) > 0 AS grew,
       (SELECT s FROM sz.m WHERE n = 4) > (SELECT s FROM sz.m WHERE n = 2)
           AS grew_again,
       (SELECT s FROM sz.m WHERE n = 5) > (SELECT s FROM sz.m WHERE n = 3)
           AS index_grew,
       (SELECT s FROM sz.m WHERE n = 4) % 8192 AS whole_blocks,
       pg_relation_size('sz.e') = (SELECT s FROM sz.m WHERE n = 4) AS same;
-- A dropped table's oid names nothing: NULL.
CREATE TABLE sz.d (a int);
INSERT INTO sz.d VALUES (1);
INSERT INTO sz.m SELECT 6, c.oid, 0 FROM pg_class c
WHERE c.relname = 'd' AND c.relnamespace =
    (SELECT oid FROM pg_namespace WHERE nspname = 'sz');
SELECT pg_relation_size(o) > 0 AS before_drop FROM sz.m WHERE n = 6;
DROP TABLE sz.d;
SELECT pg_relation_size(o), pg_total_relation_size(o) FROM sz.m WHERE n = 6;
-- Names as regclass reads them.
SELECT pg_relation_size('"sz".e') = pg_relation_size('SZ.E') AS quoted;
SELECT pg_relation_size('nosuch');
SELECT pg_relation_size('sz.nosuch');
SELECT pg_relation_size('nosch.e');
SELECT pg_relation_size('a.b.c.d');
SELECT pg_relation_size('sz.e', 'foo');
SELECT pg_relation_size('sz.e', 1);
SELECT pg_table_size(relname) FROM pg_class LIMIT 1;
SELECT pg_database_size(current_database()) > 0 AS db,
       pg_database_size(current_database()) >= pg_total_relation_size('sz.e')
           AS holds_e;
SELECT pg_database_size('nosuch');
-- What psql's \l+ asks besides: keel has no privileges to refuse.
SELECT has_database_privilege(current_database(),
                              'connect, TEMP with grant option'),
       has_database_privilege(current_database(), 'CREATE'),
       shobj_description(d.oid, 'pg_database'), t.spcname
FROM pg_database d JOIN pg_tablespace t ON t.oid = d.dattablespace
WHERE d.datname = current_database();
SELECT has_database_privilege(current_database(), 'select');
SELECT has_database_privilege('nosuch', 'connect');
-- pg_size_pretty: PostgreSQL's units and rounding, bigint and numeric.
SELECT size, pg_size_pretty(size), pg_size_pretty(-1 * size) FROM
    (SELECT 0::bigint AS size UNION ALL SELECT 10239 UNION ALL SELECT 10240
     UNION ALL SELECT 10485247 UNION ALL SELECT 10485248
     UNION ALL SELECT 10736893951 UNION ALL SELECT 10736893952
     UNION ALL SELECT 10994579406847 UNION ALL SELECT 10994579406848
     UNION ALL SELECT 11258449312612351 UNION ALL SELECT 11258449312612352
     UNION ALL SELECT 9223372036854775807) x ORDER BY 1;
SELECT size, pg_size_pretty(size), pg_size_pretty(-1 * size) FROM
    (SELECT 10.5::numeric AS size UNION ALL SELECT 10239.5
     UNION ALL SELECT 1000000.5 UNION ALL SELECT 10485247
     UNION ALL SELECT 10485248 UNION ALL SELECT 11258449312612352
     UNION ALL SELECT 11528652096115048447
     UNION ALL SELECT 11528652096115048448
     UNION ALL SELECT 123456789012345678901234567890) x ORDER BY 1;
SELECT pg_size_pretty(-9223372036854775808), pg_size_pretty('NaN'::numeric),
       pg_size_pretty(NULL::bigint), pg_size_pretty(8192::bigint * 1024);
SELECT pg_size_pretty(1);
SELECT pg_size_pretty('1');
SELECT pg_size_pretty(1.5::float8);
-- Comments: keel keeps none.
SELECT obj_description(c.oid, 'pg_class'), obj_description(c.oid),
       col_description(c.oid, 1)
FROM pg_class c WHERE c.relname = 'e';
SELECT x, length(x) FROM unnest('{a,"b c",NULL}'::text[]) x;
SELECT count(*) FROM unnest(NULL::text[]) u;
SELECT '{a}'::text[] || '{b,c}'::text[], NULL::text[] || '{x}'::text[],
       '{}'::text[] || '{y}'::text[], '{z}'::text[] || '{}'::text[];
DROP TABLE sz.e;
DROP TABLE sz.f;
DROP TABLE sz.m;
DROP SCHEMA sz;
