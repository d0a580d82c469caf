-- What drivers ask as they connect or look a type up: psycopg2's hstore
-- lookup, SQLAlchemy's dialect set-up, psycopg's TypeInfo.fetch().
SELECT t.oid, typarray
FROM pg_type t JOIN pg_namespace ns
    ON typnamespace = ns.oid
WHERE typname = 'hstore';
select current_schema();
show transaction isolation level;
show standard_conforming_strings;
SELECT
    typname AS name, oid, typarray AS array_oid,
    oid::regtype::text AS regtype, typdelim AS delimiter
FROM pg_type t
WHERE t.oid = 'integer'::regtype
ORDER BY t.oid;
SELECT typname, typarray, typelem, typrelid, typlen, typbyval, typalign
FROM pg_type WHERE oid IN (to_regtype('text'), 'int8'::regtype,
                           'timestamp with time zone'::regtype)
ORDER BY oid;
SELECT to_regtype('hstore') IS NULL AS no_hstore,
       to_regclass('no_such_table') IS NULL AS no_table,
       to_regnamespace('public') = 'public'::regnamespace AS public_ok;
SELECT 'no_such_type'::regtype;
\dT
