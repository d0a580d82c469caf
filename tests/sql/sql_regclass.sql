-- A relation's name cast to regclass: read as regclassin reads it,
-- shown as the name, compared (as PostgreSQL's oid operators compare)
-- with oids, other regclasses and literals read as oids.  The answers
-- are PostgreSQL 15's.
CREATE SCHEMA rcs;
CREATE TABLE rcs.e (a int);
CREATE TABLE rct (a int);
SELECT 'rct'::regclass AS name, 'rcs.e'::regclass AS qualified;
SELECT '"rct"'::regclass AS quoted, 'RCS.E'::regclass AS folded;
SELECT 'rct'::regclass::oid = c.oid AS same_oid FROM pg_class c WHERE c.relname = 'rct';
SELECT c.relname FROM pg_class c WHERE c.oid = 'rcs.e'::regclass;
SELECT c.relname FROM pg_class c WHERE 'rct'::regclass = c.oid;
SELECT c.relname FROM pg_class c WHERE c.oid::regclass = 'rct';
SELECT 'rct'::regclass = 'rct'::regclass AS same, 'rct'::regclass = 'rcs.e'::regclass AS differ;
SELECT NULL::regclass IS NULL AS null_stays;
SELECT 'nosuch'::regclass;
SELECT 'rcs.nosuch'::regclass;
SELECT 'nosch.e'::regclass;
-- a regclass is a type: what a subquery or a UNION gives meets an oid
SELECT pg_typeof('rct'::regclass) AS type, 'rct'::regclass::text || '!' AS text;
SELECT c.relname FROM pg_class c
  WHERE c.oid IN (SELECT 'rct'::regclass UNION ALL VALUES ('rcs.e'::regclass))
  ORDER BY 1;
SELECT (SELECT 'rct'::regclass) = c.oid AS same FROM pg_class c
  WHERE c.relname = 'rct';
SELECT x::oid = c.oid AS same FROM (SELECT 'rcs.e'::regclass AS x) s, pg_class c
  WHERE c.relname = 'e';
SELECT count(*) FROM (SELECT 'rct'::regclass UNION SELECT c.oid FROM pg_class c
  WHERE c.relname = 'rct') u;
-- pg_catalog's names are the catalogs' oids
SELECT 'pg_catalog.pg_trigger'::regclass::oid AS trigger,
  'pg_class'::regclass::oid AS class, 2606::regclass AS constraint_name;
SELECT 'pg_catalog.nosuch'::regclass;
-- a table that is no partition has no ancestors (keel has none)
SELECT a.relid, a.depth
  FROM pg_partition_ancestors('rct') WITH ORDINALITY AS a(relid, depth);
SELECT pg_partition_ancestors('rcs.e'), 1 AS one;
SELECT * FROM pg_partition_ancestors('nosuch');
SELECT c.relname FROM pg_class c WHERE c.oid IN
  (SELECT pg_partition_ancestors('rct') UNION ALL VALUES ('rct'::regclass));
SELECT count(*) FROM pg_trigger;
DROP TABLE rct;
DROP TABLE rcs.e;
DROP SCHEMA rcs;
