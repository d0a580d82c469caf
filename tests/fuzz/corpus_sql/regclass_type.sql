SELECT c.relname FROM pg_class c WHERE c.oid IN (SELECT pg_partition_ancestors('t') UNION ALL VALUES ('t'::regclass));
SELECT (SELECT 't'::regclass) = 1, 'pg_catalog.pg_trigger'::regclass::oid, x::oid FROM (SELECT 'pg_class'::regclass x) s;
SELECT d.refobjid::regclass, t.tgname, pg_get_triggerdef(t.oid, true) FROM pg_depend d LEFT JOIN pg_trigger t ON t.oid = d.objid;
