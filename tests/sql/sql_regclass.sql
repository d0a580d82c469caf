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
DROP TABLE rct;
DROP TABLE rcs.e;
DROP SCHEMA rcs;
