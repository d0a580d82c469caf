/*
 * sql_catalog.c: pg_catalog, PostgreSQL's system catalogs as views over
 * keel's own (keel_catalog's keel_class, keel_namespace, keel_attribute,
 * keel_index), so that clients that read them (pgbench, psql's \dt, \d,
 * \l) get true answers.
 *
 * Most views are SQL text over keel_catalog's tables, parsed once per
 * process and run as a subquery of the statement that names them, in its
 * transaction's snapshot.  Those of constant rows (pg_type, pg_am,
 * pg_collation) are tables of literals here, cast to their columns'
 * types as they are read.  What keel has none of (partitions,
 * inheritance, policies, publications) is an empty view.
 *
 * The functions that name catalog objects by oid (pg_table_is_visible(),
 * regclass, pg_get_indexdef()) read keel_catalog here too, by its oid
 * indexes: each opens and ends its own scan, so the caller must hold none
 * open (see sql_expr_reads_engine()).
 *
 * keel has one role, the user connected, shown as oid 10 (PostgreSQL's
 * bootstrap superuser); it owns everything but public, which belongs to
 * pg_database_owner (6171) as in a fresh PostgreSQL 15 database.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/sql_internal.h"

/* A view defined by a SELECT over keel_catalog.  keel_class's kinds are
 * 't' (a table: PostgreSQL's 'r') and 'i' (an index). */
typedef struct sql_view {
    const char *name;
    const char *text;
    /* A table it reads that exists only once it has a row ("schema.table":
     * keel_sql.keel_attrdef, column defaults; keel_auth.keel_authid,
     * roles); without it the next view of the same name is read
     * instead. */
    const char *needs;
} sql_view;

/* pg_attribute's columns over keel_attribute a, the relation, number,
 * nullability and atthasdef given: keel_attribute's type is a keel_type,
 * KEEL_INT2 (1) to KEEL_JSONB (17) in keel.h's order; a text column
 * with a length (charlen) is varchar(n). */
#define PG_ATTRIBUTE_COLS(relid, attnum, notnull, hasdef, identity)           \
    "select " relid " as attrelid, a.name as attname,"                        \
    " (case a.type when 1 then 21 when 2 then 23 when 3 then 20"              \
    " when 4 then 26 when 5 then 16 when 6 then 701 when 7 then 19"           \
    " when 8 then 1042 when 10 then 1114 when 11 then 1184"                   \
    " when 12 then 1082 when 13 then 1700 when 14 then 2950 when 15 then 17" \
    " when 16 then 114 when 17 then 3802"                                    \
    " when 9 then case when a.charlen > 0 then 1043"                          \
    " else 25 end end)::oid as atttypid,"                                     \
    " (case a.type when 1 then 2 when 2 then 4 when 3 then 8 when 4 then 4"   \
    " when 5 then 1 when 6 then 8 when 7 then 64 when 10 then 8"              \
    " when 11 then 8 when 12 then 4 when 14 then 16"                          \
    " else -1 end)::int2 as attlen,"                                          \
    " " attnum " as attnum,"                                                  \
    " case when a.type in (8, 9) and a.charlen > 0 then a.charlen + 4"        \
    " when a.type = 13 and a.charlen > 0"                                     \
    " then a.charlen / 64 * 65536 + a.charlen % 64 + 4"                       \
    " else -1 end as atttypmod,"                                              \
    " " notnull " as attnotnull, " hasdef " as atthasdef,"                   \
    " false as atthasmissing, " identity "::char(1) as attidentity,"          \
    " ''::char(1) as attgenerated, false as attisdropped,"                    \
    " true as attislocal, 0 as attinhcount,"                                  \
    " (case a.type when 7 then 950 when 8 then 100 when 9 then 100"           \
    " else 0 end)::oid as attcollation,"                                      \
    " (case when a.type in (8, 9, 15, 16, 17) then 'x'"                        \
    " when a.type = 13 then 'm'"                                              \
    " else 'p' end)::char(1) as attstorage,"                                  \
    " ''::text as attcompression, -1 as attstattarget"

/* An identity column's default (sql_default_identity()) is none to
 * PostgreSQL's catalogs: its attidentity says what it is. */
#define IDENTITY_OF(d)                                                        \
    "(case when " d ".adsrc like 'keel_identity_always(%' then 'a'"           \
    " when " d ".adsrc like 'keel_identity_by_default(%' then 'd'"            \
    " else '' end)"

/* A table's columns. */
#define PG_ATTRIBUTE(hasdef, identity)                                        \
    PG_ATTRIBUTE_COLS("a.relid", "a.attnum", "a.notnull", hasdef, identity)   \
    " from keel_catalog.keel_attribute a"

/* An index's columns, as PostgreSQL keeps them: its key columns in
 * order, each named and typed as the table's column it holds
 * (keel_index.keys lists their numbers, separated by blanks). */
#define PG_INDEX_ATTRIBUTE                                                    \
    " union all "                                                             \
    PG_ATTRIBUTE_COLS("i.indexrelid", "g.k::int2", "false", "false", "''")    \
    " from keel_catalog.keel_index i"                                         \
    " cross join lateral generate_series(1, i.nkeys) g(k)"                    \
    " join keel_catalog.keel_attribute a on a.relid = i.indrelid"             \
    " and a.attnum = split_part(i.keys, ' ', g.k)::int2"

/* pg_class over keel_class, relchecks, relhastriggers and the joins
 * they need given (CHECK constraints are keel_sql.keel_check's,
 * sql_check.c; a foreign key's two tables have triggers in PostgreSQL,
 * which psql's \d asks before it lists keys). */
#define PG_CLASS(relchecks, hastriggers, join)                                \
    "select c.oid, c.name as relname, c.namespace as relnamespace,"           \
    " 0::oid as reltype, 0::oid as reloftype, 10::oid as relowner,"           \
    " (case c.kind when 'i' then 403 else 2 end)::oid as relam,"              \
    " c.relnumber as relfilenode, 0::oid as reltablespace,"                   \
    " c.pages as relpages, c.tuples as reltuples, 0 as relallvisible,"        \
    " 0::oid as reltoastrelid, x.indrelid is not null as relhasindex,"        \
    " false as relisshared, 'p'::char(1) as relpersistence,"                  \
    " case c.kind when 't' then 'r'::char(1) else c.kind end as relkind,"     \
    " c.natts as relnatts, " relchecks " as relchecks,"                       \
    " false as relhasrules, " hastriggers " as relhastriggers,"               \
    " false as relhassubclass, false as relrowsecurity,"                      \
    " false as relforcerowsecurity, true as relispopulated,"                  \
    " 'd'::char(1) as relreplident, false as relispartition,"                 \
    " null::text as relpartbound, null::text[] as reloptions"                 \
    " from keel_catalog.keel_class c"                                         \
    " left join (select indrelid from keel_catalog.keel_index"                \
    " group by indrelid) x on x.indrelid = c.oid" join

/* pg_constraint's rows of primary keys. */
#define PG_CONSTRAINT_PKEYS                                                   \
    "select i.indexrelid as oid, c.name as conname,"                          \
    " c.namespace as connamespace, 'p'::char(1) as contype,"                  \
    " false as condeferrable, false as condeferred, true as convalidated,"    \
    " i.indrelid as conrelid, 0::oid as contypid,"                            \
    " i.indexrelid as conindid, 0::oid as confrelid,"                         \
    " ' '::char(1) as confupdtype, ' '::char(1) as confdeltype,"              \
    " ' '::char(1) as confmatchtype, true as conislocal,"                     \
    " 0::oid as conparentid,"                                                 \
    " string_to_array(i.keys, ' ')::int2[] as conkey,"                        \
    " null::int2[] as confkey"                                                \
    " from keel_catalog.keel_index i"                                         \
    " join keel_catalog.keel_class c on c.oid = i.indexrelid"                 \
    " where i.\"primary\""

/* pg_constraint's rows of foreign keys (keel_sql.keel_fkey's). */
#define PG_CONSTRAINT_FKEYS                                                   \
    " union all"                                                              \
    " select f.oid, f.conname::name, c.namespace, 'f'::char(1),"              \
    " f.condeferrable, f.condeferred,"                                        \
    " true, f.conrelid, 0::oid, 0::oid, f.confrelid,"                         \
    " f.confupdtype::char(1), f.confdeltype::char(1),"                        \
    " f.confmatchtype::char(1), true, 0::oid,"                                \
    " string_to_array(f.conkey, ' ')::int2[],"                                \
    " string_to_array(f.confkey, ' ')::int2[]"                                \
    " from keel_sql.keel_fkey f"                                              \
    " join keel_catalog.keel_class c on c.oid = f.conrelid"

/* pg_constraint's rows of CHECK constraints (keel_sql.keel_check's). */
#define PG_CONSTRAINT_CHECKS                                                  \
    " union all"                                                              \
    " select k.oid, k.conname::name, c.namespace, 'c'::char(1), false, false,"\
    " true, k.conrelid, 0::oid, 0::oid, 0::oid, ' ', ' ', ' ', true, 0::oid," \
    " null::int2[], null::int2[]"                                             \
    " from keel_sql.keel_check k"                                             \
    " join keel_catalog.keel_class c on c.oid = k.conrelid"

/* pg_depend's rows of indexes and primary keys (a primary key's
 * constraint shares its index's oid, as in pg_constraint here). */
#define PG_DEPEND_INDEXES                                                     \
    "select 1259::oid as classid, i.indexrelid as objid, 0 as objsubid,"      \
    " (case when i.\"primary\" then 2606 else 1259 end)::oid as refclassid,"  \
    " case when i.\"primary\" then i.indexrelid else i.indrelid end"          \
    " as refobjid, case when i.\"primary\" then 0"                            \
    " else split_part(i.keys, ' ', g.k)::int end as refobjsubid,"             \
    " (case when i.\"primary\" then 'i' else 'a' end)::char(1) as deptype"    \
    " from keel_catalog.keel_index i cross join lateral"                      \
    " generate_series(1, case when i.\"primary\" then 1 else i.nkeys end)"    \
    " g(k) where i.indexrelid >= 16384"                                       \
    " union all select 2606::oid, i.indexrelid, 0, 1259::oid, i.indrelid,"    \
    " split_part(i.keys, ' ', g.k)::int, 'a'::char(1)"                        \
    " from keel_catalog.keel_index i"                                         \
    " cross join lateral generate_series(1, i.nkeys) g(k)"                    \
    " where i.\"primary\" and i.indexrelid >= 16384"

/* pg_depend's rows of foreign keys: on their own columns (auto) and on
 * those they reference (normal). */
#define PG_DEPEND_FKEYS                                                       \
    " union all select 2606::oid, f.oid, 0, 1259::oid, f.conrelid,"           \
    " k::int, 'a'::char(1) from keel_sql.keel_fkey f"                         \
    " cross join lateral unnest(string_to_array(f.conkey, ' ')) k"            \
    " union all select 2606::oid, f.oid, 0, 1259::oid, f.confrelid,"          \
    " k::int, 'n'::char(1) from keel_sql.keel_fkey f"                         \
    " cross join lateral unnest(string_to_array(f.confkey, ' ')) k"

static const sql_view views[] = {
    {"pg_namespace",
     "select n.oid, n.name as nspname,"
     " (case n.name when 'public' then 6171 else 10 end)::oid as nspowner"
     " from keel_catalog.keel_namespace n",
     NULL},
    {"pg_class", PG_CLASS("coalesce(k.n, 0)::int2", "f.r is not null",
                          " left join (select conrelid, count(*) as n"
                          " from keel_sql.keel_check group by conrelid) k"
                          " on k.conrelid = c.oid"
                          " left join (select conrelid as r"
                          " from keel_sql.keel_fkey union"
                          " select confrelid from keel_sql.keel_fkey) f"
                          " on f.r = c.oid"),
     "keel_sql.keel_fkey"},
    {"pg_class", PG_CLASS("coalesce(k.n, 0)::int2", "false",
                          " left join (select conrelid, count(*) as n"
                          " from keel_sql.keel_check group by conrelid) k"
                          " on k.conrelid = c.oid"),
     "keel_sql.keel_check"},
    {"pg_class", PG_CLASS("0::int2", "false", ""), NULL},
    {"pg_attribute",
     PG_ATTRIBUTE("(d.adrelid is not null and " IDENTITY_OF("d") " = '')",
                  IDENTITY_OF("d"))
     " left join keel_sql.keel_attrdef d"
     " on d.adrelid = a.relid and d.adnum = a.attnum" PG_INDEX_ATTRIBUTE,
     "keel_sql.keel_attrdef"},
    {"pg_attribute", PG_ATTRIBUTE("false", "''") PG_INDEX_ATTRIBUTE, NULL},
    {"pg_index",
     "select i.indexrelid, i.indrelid, i.nkeys as indnatts,"
     " i.nkeys as indnkeyatts, i.\"unique\" as indisunique,"
     " i.\"primary\" as indisprimary, false as indisexclusion,"
     " true as indimmediate, false as indisclustered, true as indisvalid,"
     " false as indcheckxmin, true as indisready, true as indislive,"
     " false as indisreplident, false as indnullsnotdistinct,"
     " i.keys as indkey, null::text as indexprs, null::text as indpred"
     " from keel_catalog.keel_index i",
     NULL},
    {"pg_database",
     "select 1::oid as oid, current_database() as datname,"
     " 10::oid as datdba, 6 as encoding, 'c'::char(1) as datlocprovider,"
     " false as datistemplate, true as datallowconn, -1 as datconnlimit,"
     " 1663::oid as dattablespace, 'C'::text as datcollate,"
     " 'C'::text as datctype, null::text as daticulocale,"
     " null::name[] as datacl",
     NULL},
    /* The roles CREATE ROLE made, and the connected user if it is none
     * of them (trust lets anyone in by any name). */
    {"pg_roles",
     "select (case when a.rolname = current_user then 10 else 16384 end)::oid"
     " as oid, a.rolname, a.rolsuper, true as rolinherit,"
     " a.rolsuper as rolcreaterole, a.rolsuper as rolcreatedb,"
     " a.rolcanlogin, false as rolreplication, -1 as rolconnlimit,"
     " null::timestamptz as rolvaliduntil, a.rolsuper as rolbypassrls"
     " from keel_auth.keel_authid a"
     " union all select 10::oid, current_user, true, true, true, true, true,"
     " false, -1, null::timestamptz, true where not exists"
     " (select 1 from keel_auth.keel_authid x where x.rolname = current_user)",
     "keel_auth.keel_authid"},
    {"pg_roles",
     "select 10::oid as oid, current_user as rolname, true as rolsuper,"
     " true as rolinherit, true as rolcreaterole, true as rolcreatedb,"
     " true as rolcanlogin, false as rolreplication, -1 as rolconnlimit,"
     " null::timestamptz as rolvaliduntil, true as rolbypassrls",
     NULL},
    {"pg_auth_members",
     "select 0::oid as roleid, 0::oid as member, 0::oid as grantor,"
     " false as admin_option where false",
     NULL},
    {"pg_user",
     "select current_user as usename, 10::oid as usesysid,"
     " true as usecreatedb, true as usesuper, false as userepl,"
     " true as usebypassrls",
     NULL},
    {"pg_partitioned_table",
     "select 0::oid as partrelid, 'h'::char(1) as partstrat,"
     " 0::int2 as partnatts, 0::oid as partdefid where false",
     NULL},
    {"pg_publication",
     "select 0::oid as oid, ''::name as pubname, 10::oid as pubowner,"
     " false as puballtables, false as pubinsert, false as pubupdate,"
     " false as pubdelete, false as pubtruncate, false as pubviaroot"
     " where false",
     NULL},
    {"pg_publication_namespace",
     "select 0::oid as oid, 0::oid as pnpubid, 0::oid as pnnspid"
     " where false",
     NULL},
    {"pg_publication_rel",
     "select 0::oid as oid, 0::oid as prpubid, 0::oid as prrelid,"
     " null::text as prqual, null::int2[] as prattrs where false",
     NULL},
    /* A primary key is the one constraint keel keeps apart from its
     * index; it shares the index's oid and name.  CHECK constraints are
     * keel_sql.keel_check's (sql_check.c). */
    /* and foreign keys, keel_sql.keel_fkey's (sql_fkey.c), which is never
     * there without keel_check, and UNIQUE constraints, whose indexes
     * keel_sql.keel_unique names (sql_unique.c; never without the other
     * two), each sharing its index's oid */
    {"pg_constraint",
     PG_CONSTRAINT_PKEYS PG_CONSTRAINT_CHECKS PG_CONSTRAINT_FKEYS
     " union all"
     " select i.indexrelid, u.conname::name, t.namespace, 'u'::char(1),"
     " false, false, true, u.conrelid, 0::oid, i.indexrelid, 0::oid,"
     " ' ', ' ', ' ', true, 0::oid, string_to_array(i.keys, ' ')::int2[],"
     " null::int2[]"
     " from keel_sql.keel_unique u"
     " join keel_catalog.keel_class t on t.oid = u.conrelid"
     " join keel_catalog.keel_class c on c.name = u.conname"
     " and c.namespace = t.namespace"
     " join keel_catalog.keel_index i on i.indexrelid = c.oid",
     "keel_sql.keel_unique"},
    {"pg_constraint",
     PG_CONSTRAINT_PKEYS PG_CONSTRAINT_CHECKS PG_CONSTRAINT_FKEYS,
     "keel_sql.keel_fkey"},
    {"pg_constraint", PG_CONSTRAINT_PKEYS PG_CONSTRAINT_CHECKS,
     "keel_sql.keel_check"},
    {"pg_constraint", PG_CONSTRAINT_PKEYS, NULL},
    {"pg_attrdef",
     /* The expression as stored (a literal already as PostgreSQL shows
      * it, sql_default.c); a bare string literal, as a database made
      * before that stored one, given the cast to its column's type
      * ('x'::text). */
     "select 0::oid as oid, d.adrelid, d.adnum,"
     " case when d.adsrc ~ '^''([^'']|'''')*''$' and a.atttypid in"
     " (19, 25, 1042, 1043, 1082, 1114, 1184)"
     " then d.adsrc || '::' || format_type(a.atttypid, null)"
     " else d.adsrc end as adbin"
     " from keel_sql.keel_attrdef d join pg_attribute a"
     " on a.attrelid = d.adrelid and a.attnum = d.adnum"
     " where a.attidentity = ''",
     "keel_sql.keel_attrdef"},
    {"pg_attrdef",
     "select 0::oid as oid, 0::oid as adrelid, 0::int2 as adnum,"
     " null::text as adbin where false",
     NULL},
    {"pg_policy",
     "select 0::oid as oid, ''::name as polname, 0::oid as polrelid,"
     " 'r'::char(1) as polcmd, true as polpermissive,"
     " null::oid[] as polroles, null::text as polqual,"
     " null::text as polwithcheck where false",
     NULL},
    {"pg_statistic_ext",
     "select 0::oid as oid, 0::oid as stxrelid, ''::name as stxname,"
     " 0::oid as stxnamespace, 10::oid as stxowner, -1 as stxstattarget,"
     " null::int2[] as stxkeys, null::char[] as stxkind where false",
     NULL},
    /* The log's counters since the database opened, with PostgreSQL
     * 15's columns: keel times no writes or syncs (PostgreSQL's are 0
     * too unless track_wal_io_timing is on). */
    {"pg_stat_wal",
     "select w.wal_records, w.wal_fpi, w.wal_bytes::numeric as wal_bytes,"
     " w.wal_buffers_full, w.wal_write, w.wal_sync,"
     " 0::float8 as wal_write_time, 0::float8 as wal_sync_time,"
     " w.stats_reset from keel_stat_wal w",
     NULL},
    /* COMMENT ON's, of relations and their columns (sql_comment.c). */
    {"pg_description",
     "select d.objoid, 1259::oid as classoid, d.objsubid, d.description"
     " from keel_sql.keel_description d",
     "keel_sql.keel_description"},
    {"pg_description",
     "select 0::oid as objoid, 0::oid as classoid, 0 as objsubid,"
     " null::text as description where false",
     NULL},
    {"pg_inherits",
     "select 0::oid as inhrelid, 0::oid as inhparent, 0 as inhseqno,"
     " false as inhdetachpending where false",
     NULL},
    /* keel has no triggers: its foreign keys are checked without them
     * (PostgreSQL's are internal triggers, which psql does not list). */
    {"pg_trigger",
     "select 0::oid as oid, 0::oid as tgrelid, 0::oid as tgparentid,"
     " ''::name as tgname, 0::oid as tgfoid, 0::int2 as tgtype,"
     " 'O'::char(1) as tgenabled, false as tgisinternal,"
     " 0::oid as tgconstrrelid, 0::oid as tgconstrindid,"
     " 0::oid as tgconstraint, false as tgdeferrable,"
     " false as tginitdeferred, 0::int2 as tgnargs, null::text as tgattr,"
     " null::bytea as tgargs, null::text as tgqual,"
     " null::name as tgoldtable, null::name as tgnewtable where false",
     NULL},
    /* What depends on what, as far as keel's catalogs tell it: an index
     * on its table's key columns (a primary key's on its constraint,
     * which is on the columns), a foreign key on its columns and on the
     * referenced ones.  What initdb (keel init) made has no rows, as in
     * PostgreSQL, where it is pinned. */
    {"pg_depend", PG_DEPEND_INDEXES PG_DEPEND_FKEYS, "keel_sql.keel_fkey"},
    {"pg_depend", PG_DEPEND_INDEXES, NULL},
    /* information_schema's views, over pg_catalog's: the columns
     * clients read (a view's columns are not listed in columns). */
    {"information_schema.tables",
     "select current_database()::name as table_catalog,"
     " n.nspname as table_schema, c.relname as table_name,"
     " 'BASE TABLE'::varchar as table_type,"
     " null::name as self_referencing_column_name,"
     " null::varchar as reference_generation,"
     " null::name as user_defined_type_catalog,"
     " null::name as user_defined_type_schema,"
     " null::name as user_defined_type_name,"
     " 'YES'::varchar(3) as is_insertable_into,"
     " 'NO'::varchar(3) as is_typed, null::varchar as commit_action"
     " from pg_class c join pg_namespace n on n.oid = c.relnamespace"
     " where c.relkind = 'r'"
     " union all"
     " select current_database()::name, v.nspname::name, v.viewname::name,"
     " 'VIEW'::varchar, null::name, null::varchar, null::name, null::name,"
     " null::name, 'NO'::varchar(3), 'NO'::varchar(3), null::varchar"
     " from keel_sql.keel_view v",
     "keel_sql.keel_view"},
    {"information_schema.tables",
     "select current_database()::name as table_catalog,"
     " n.nspname as table_schema, c.relname as table_name,"
     " 'BASE TABLE'::varchar as table_type,"
     " null::name as self_referencing_column_name,"
     " null::varchar as reference_generation,"
     " null::name as user_defined_type_catalog,"
     " null::name as user_defined_type_schema,"
     " null::name as user_defined_type_name,"
     " 'YES'::varchar(3) as is_insertable_into,"
     " 'NO'::varchar(3) as is_typed, null::varchar as commit_action"
     " from pg_class c join pg_namespace n on n.oid = c.relnamespace"
     " where c.relkind = 'r'",
     NULL},
    {"information_schema.views",
     "select current_database()::name as table_catalog,"
     " v.nspname::name as table_schema, v.viewname::name as table_name,"
     " v.query::varchar as view_definition,"
     " 'NONE'::varchar as check_option, 'NO'::varchar(3) as is_updatable,"
     " 'NO'::varchar(3) as is_insertable_into,"
     " 'NO'::varchar(3) as is_trigger_updatable,"
     " 'NO'::varchar(3) as is_trigger_deletable,"
     " 'NO'::varchar(3) as is_trigger_insertable_into"
     " from keel_sql.keel_view v",
     "keel_sql.keel_view"},
    {"information_schema.views",
     "select null::name as table_catalog, null::name as table_schema,"
     " null::name as table_name, null::varchar as view_definition,"
     " null::varchar as check_option, null::varchar(3) as is_updatable,"
     " null::varchar(3) as is_insertable_into,"
     " null::varchar(3) as is_trigger_updatable,"
     " null::varchar(3) as is_trigger_deletable,"
     " null::varchar(3) as is_trigger_insertable_into where false",
     NULL},
    {"information_schema.schemata",
     "select current_database()::name as catalog_name,"
     " n.nspname as schema_name,"
     " pg_get_userbyid(n.nspowner)::name as schema_owner,"
     " null::name as default_character_set_catalog,"
     " null::name as default_character_set_schema,"
     " null::name as default_character_set_name,"
     " null::varchar as sql_path"
     " from pg_namespace n",
     NULL},
    {"information_schema.check_constraints",
     /* the CHECK constraints (PostgreSQL lists its NOT NULL ones here
      * too, named by oids) */
     "select current_database()::name as constraint_catalog,"
     " n.nspname as constraint_schema, k.conname::name as constraint_name,"
     " ('((' || k.consrc || '))')::varchar as check_clause"
     " from keel_sql.keel_check k"
     " join pg_class c on c.oid = k.conrelid"
     " join pg_namespace n on n.oid = c.relnamespace",
     "keel_sql.keel_check"},
    {"information_schema.check_constraints",
     "select null::name as constraint_catalog, null::name as constraint_schema,"
     " null::name as constraint_name, null::varchar as check_clause"
     " where false",
     NULL},
    /* The constraints pg_constraint has (PostgreSQL's also lists NOT
     * NULL ones as CHECK constraints, and UNIQUE ones). */
    {"information_schema.table_constraints",
     "select current_database()::name as constraint_catalog,"
     " n.nspname as constraint_schema, k.conname as constraint_name,"
     " current_database()::name as table_catalog, n.nspname as table_schema,"
     " c.relname as table_name,"
     " (case k.contype when 'p' then 'PRIMARY KEY' when 'f' then 'FOREIGN KEY'"
     " when 'u' then 'UNIQUE' else 'CHECK' end)::varchar as constraint_type,"
     " (case when k.condeferrable then 'YES' else 'NO' end)::varchar(3)"
     " as is_deferrable,"
     " (case when k.condeferred then 'YES' else 'NO' end)::varchar(3)"
     " as initially_deferred,"
     " 'YES'::varchar(3) as enforced,"
     " (case when k.contype = 'u' then 'YES' end)::varchar(3)"
     " as nulls_distinct"
     " from pg_constraint k join pg_class c on c.oid = k.conrelid"
     " join pg_namespace n on n.oid = c.relnamespace",
     NULL},
    /* The columns of primary and foreign keys, in key order. */
    {"information_schema.key_column_usage",
     "select current_database()::name as constraint_catalog,"
     " n.nspname as constraint_schema, k.conname as constraint_name,"
     " current_database()::name as table_catalog, n.nspname as table_schema,"
     " c.relname as table_name, a.attname as column_name,"
     " g.i::int as ordinal_position,"
     " (case when k.contype = 'f' then coalesce(array_position("
     "(select p.conkey from pg_constraint p where p.conrelid = k.confrelid"
     " and p.contype = 'p'), k.confkey[g.i]), g.i) end)::int"
     " as position_in_unique_constraint"
     " from pg_constraint k join pg_class c on c.oid = k.conrelid"
     " join pg_namespace n on n.oid = c.relnamespace"
     " cross join lateral generate_series(1, cardinality(k.conkey)) g(i)"
     " join pg_attribute a on a.attrelid = k.conrelid"
     " and a.attnum = k.conkey[g.i]"
     " where k.contype in ('p', 'u', 'f')",
     NULL},
    /* Foreign keys, and the key each refers to: the primary key when it
     * has their columns, else a unique index that does. */
    {"information_schema.referential_constraints",
     "select current_database()::name as constraint_catalog,"
     " n.nspname as constraint_schema, k.conname as constraint_name,"
     " current_database()::name as unique_constraint_catalog,"
     " pn.nspname as unique_constraint_schema,"
     " (select ci.relname from pg_index i join pg_class ci"
     " on ci.oid = i.indexrelid where i.indrelid = k.confrelid"
     " and i.indisunique and (select array_agg(x order by x)"
     " from unnest(string_to_array(i.indkey, ' ')::int2[]) x)"
     " = (select array_agg(x order by x) from unnest(k.confkey) x)"
     " order by i.indisprimary desc, ci.relname limit 1)"
     " as unique_constraint_name,"
     " (case k.confmatchtype when 'f' then 'FULL' when 'p' then 'PARTIAL'"
     " else 'NONE' end)::varchar as match_option,"
     " (case k.confupdtype when 'c' then 'CASCADE' when 'n' then 'SET NULL'"
     " when 'd' then 'SET DEFAULT' when 'r' then 'RESTRICT'"
     " else 'NO ACTION' end)::varchar as update_rule,"
     " (case k.confdeltype when 'c' then 'CASCADE' when 'n' then 'SET NULL'"
     " when 'd' then 'SET DEFAULT' when 'r' then 'RESTRICT'"
     " else 'NO ACTION' end)::varchar as delete_rule"
     " from pg_constraint k join pg_class c on c.oid = k.conrelid"
     " join pg_namespace n on n.oid = c.relnamespace"
     " join pg_class pc on pc.oid = k.confrelid"
     " join pg_namespace pn on pn.oid = pc.relnamespace"
     " where k.contype = 'f'",
     NULL},
    /* The columns keys use: a foreign key's, those it refers to. */
    {"information_schema.constraint_column_usage",
     "select current_database()::name as table_catalog,"
     " n.nspname as table_schema, c.relname as table_name,"
     " a.attname as column_name,"
     " current_database()::name as constraint_catalog,"
     " kn.nspname as constraint_schema, k.conname as constraint_name"
     " from pg_constraint k"
     " cross join lateral generate_series(1, cardinality(case k.contype"
     " when 'f' then k.confkey else k.conkey end)) g(i)"
     " join pg_class c on c.oid = (case k.contype when 'f' then k.confrelid"
     " else k.conrelid end)"
     " join pg_namespace n on n.oid = c.relnamespace"
     " join pg_attribute a on a.attrelid = c.oid"
     " and a.attnum = (case k.contype when 'f' then k.confkey"
     " else k.conkey end)[g.i]"
     " join pg_namespace kn on kn.oid = k.connamespace"
     " where k.contype in ('p', 'u', 'f')",
     NULL},
    {"information_schema.columns",
     "select current_database()::name as table_catalog,"
     " n.nspname as table_schema, c.relname as table_name,"
     " a.attname as column_name, a.attnum::int as ordinal_position,"
     " pg_get_expr(d.adbin, d.adrelid)::varchar as column_default,"
     " (case when a.attnotnull then 'NO' else 'YES' end)::varchar(3)"
     " as is_nullable,"
     " (case a.atttypid when 1042 then 'character'"
     " else format_type(a.atttypid, null) end)::varchar as data_type,"
     " case when a.atttypid in (1042, 1043) and a.atttypmod > 0"
     " then a.atttypmod - 4 end as character_maximum_length,"
     " case when a.atttypid in (1042, 1043) and a.atttypmod > 0"
     " then (a.atttypmod - 4) * 4"
     " when a.atttypid in (25, 1042, 1043) then 1073741824"
     " end as character_octet_length,"
     " case a.atttypid when 21 then 16 when 23 then 32 when 20 then 64"
     " when 701 then 53 when 1700 then case when a.atttypmod > 0"
     " then (a.atttypmod - 4) / 65536 end end as numeric_precision,"
     " case when a.atttypid in (21, 23, 20, 701) then 2"
     " when a.atttypid = 1700 then 10 end as numeric_precision_radix,"
     " case when a.atttypid in (21, 23, 20) then 0"
     " when a.atttypid = 1700 and a.atttypmod > 0"
     " then (a.atttypmod - 4) % 65536 end as numeric_scale,"
     " case when a.atttypid = 1082 then 0"
     " when a.atttypid in (1114, 1184) then 6 end as datetime_precision,"
     " current_database()::name as udt_catalog,"
     " 'pg_catalog'::name as udt_schema, t.typname as udt_name,"
     " a.attnum::int as dtd_identifier,"
     " 'NO'::varchar(3) as is_self_referencing,"
     " (case when a.attidentity = '' then 'NO' else 'YES' end)::varchar(3)"
     " as is_identity,"
     " (case a.attidentity when 'a' then 'ALWAYS' when 'd' then 'BY DEFAULT'"
     " end)::varchar as identity_generation,"
     " 'NEVER'::varchar as is_generated,"
     " 'YES'::varchar(3) as is_updatable"
     " from pg_attribute a"
     " join pg_class c on c.oid = a.attrelid"
     " join pg_namespace n on n.oid = c.relnamespace"
     " join pg_type t on t.oid = a.atttypid"
     " left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum"
     " where c.relkind = 'r' and a.attnum > 0",
     NULL},
};

#define NVIEWS (sizeof(views) / sizeof(views[0]))

/* A view of constant rows: each value a literal cast to its column's
 * type (NULL for none). */
typedef struct sql_const_view {
    const char *name;
    uint16_t ncols;
    const char *cols[20];
    uint32_t types[20];
    uint16_t nrows;
    const char *rows[20][20];
} sql_const_view;

static const sql_const_view const_views[] = {
    {"pg_am",
     3,
     {"oid", "amname", "amtype"},
     {SQL_TYPE_OID, SQL_TYPE_NAME, SQL_TYPE_BPCHAR},
     2,
     {{"2", "heap", "t"}, {"403", "btree", "i"}}},
    /* Where PostgreSQL's databases and shared catalogs live; keel's
     * database is its directory, PostgreSQL's default tablespace. */
    {"pg_tablespace",
     3,
     {"oid", "spcname", "spcowner"},
     {SQL_TYPE_OID, SQL_TYPE_NAME, SQL_TYPE_OID},
     2,
     {{"1663", "pg_default", "10"}, {"1664", "pg_global", "10"}}},
    {"pg_collation",
     4,
     {"oid", "collname", "collnamespace", "collprovider"},
     {SQL_TYPE_OID, SQL_TYPE_NAME, SQL_TYPE_OID, SQL_TYPE_BPCHAR},
     3,
     {{"100", "default", "11", "d"},
      {"950", "C", "11", "c"},
      {"951", "POSIX", "11", "c"}}},
    {"pg_type",
     20,
     {"oid", "typname", "typnamespace", "typowner", "typlen", "typbyval", "typtype", "typcategory", "typcollation", "typrelid", "typelem", "typarray", "typdelim", "typbasetype", "typtypmod", "typndims", "typnotnull", "typisdefined", "typalign", "typstorage"},
     {SQL_TYPE_OID, SQL_TYPE_NAME, SQL_TYPE_OID, SQL_TYPE_OID, SQL_TYPE_INT2, SQL_TYPE_BOOL, SQL_TYPE_BPCHAR, SQL_TYPE_BPCHAR, SQL_TYPE_OID, SQL_TYPE_OID, SQL_TYPE_OID, SQL_TYPE_OID, SQL_TYPE_BPCHAR, SQL_TYPE_OID, SQL_TYPE_INT4, SQL_TYPE_INT4, SQL_TYPE_BOOL, SQL_TYPE_BOOL, SQL_TYPE_BPCHAR, SQL_TYPE_BPCHAR},
     20,
     {{"16", "bool", "11", "10", "1", "t", "b", "B", "0", "0", "0", "1000", ",", "0", "-1", "0", "f", "t", "c", "p"},
      {"19", "name", "11", "10", "64", "f", "b", "S", "950", "0", "0", "1003", ",", "0", "-1", "0", "f", "t", "c", "p"},
      {"20", "int8", "11", "10", "8", "t", "b", "N", "0", "0", "0", "1016", ",", "0", "-1", "0", "f", "t", "d", "p"},
      {"21", "int2", "11", "10", "2", "t", "b", "N", "0", "0", "0", "1005", ",", "0", "-1", "0", "f", "t", "s", "p"},
      {"23", "int4", "11", "10", "4", "t", "b", "N", "0", "0", "0", "1007", ",", "0", "-1", "0", "f", "t", "i", "p"},
      {"25", "text", "11", "10", "-1", "f", "b", "S", "100", "0", "0", "1009", ",", "0", "-1", "0", "f", "t", "i", "x"},
      {"26", "oid", "11", "10", "4", "t", "b", "N", "0", "0", "0", "1028", ",", "0", "-1", "0", "f", "t", "i", "p"},
      {"701", "float8", "11", "10", "8", "t", "b", "N", "0", "0", "0", "1022", ",", "0", "-1", "0", "f", "t", "d", "p"},
      {"1003", "_name", "11", "10", "-1", "f", "b", "A", "950", "0", "19", "0", ",", "0", "-1", "0", "f", "t", "i", "x"},
      {"1042", "bpchar", "11", "10", "-1", "f", "b", "S", "100", "0", "0", "1014", ",", "0", "-1", "0", "f", "t", "i", "x"},
      {"1043", "varchar", "11", "10", "-1", "f", "b", "S", "100", "0", "0", "1015", ",", "0", "-1", "0", "f", "t", "i", "x"},
      {"1082", "date", "11", "10", "4", "t", "b", "D", "0", "0", "0", "1182", ",", "0", "-1", "0", "f", "t", "i", "p"},
      {"1114", "timestamp", "11", "10", "8", "t", "b", "D", "0", "0", "0", "1115", ",", "0", "-1", "0", "f", "t", "d", "p"},
      {"1184", "timestamptz", "11", "10", "8", "t", "b", "D", "0", "0", "0", "1185", ",", "0", "-1", "0", "f", "t", "d", "p"},
      {"1700", "numeric", "11", "10", "-1", "f", "b", "N", "0", "0", "0", "1231", ",", "0", "-1", "0", "f", "t", "i", "m"},
      {"1186", "interval", "11", "10", "16", "f", "b", "T", "0", "0", "0", "1187", ",", "0", "-1", "0", "f", "t", "d", "p"},
      {"17", "bytea", "11", "10", "-1", "f", "b", "U", "0", "0", "0", "1001", ",", "0", "-1", "0", "f", "t", "i", "x"},
      {"2950", "uuid", "11", "10", "16", "f", "b", "U", "0", "0", "0", "2951", ",", "0", "-1", "0", "f", "t", "c", "p"},
      {"114", "json", "11", "10", "-1", "f", "b", "U", "0", "0", "0", "199", ",", "0", "-1", "0", "f", "t", "i", "x"},
      {"3802", "jsonb", "11", "10", "-1", "f", "b", "U", "0", "0", "0", "3807", ",", "0", "-1", "0", "f", "t", "i", "x"}}},
};

#define NCONST (sizeof(const_views) / sizeof(const_views[0]))

/* The oids PostgreSQL 15 gives the catalogs that views here stand for,
 * which regclass reads and prints ('pg_catalog.pg_trigger'::regclass is
 * 2620, as psql's \d compares it). */
static const struct {
    const char *name;
    uint32_t oid;
} catalog_oids[] = {
    {"pg_am", 2601},          {"pg_attrdef", 2604},
    {"pg_attribute", 1249},   {"pg_auth_members", 1261},
    {"pg_class", 1259},       {"pg_collation", 3456},
    {"pg_constraint", 2606},  {"pg_database", 1262},
    {"pg_depend", 2608},      {"pg_description", 2609},
    {"pg_index", 2610},       {"pg_inherits", 2611},
    {"pg_namespace", 2615},   {"pg_partitioned_table", 3350},
    {"pg_policy", 3256},      {"pg_publication", 6104},
    {"pg_publication_namespace", 6237},
    {"pg_publication_rel", 6106},
    {"pg_statistic_ext", 3381}, {"pg_tablespace", 1213},
    {"pg_trigger", 2620},     {"pg_type", 1247},
};

uint32_t sql_catalog_view_oid(const char *name)
{
    for (size_t i = 0; i < sizeof(catalog_oids) / sizeof(catalog_oids[0]); i++)
        if (strcmp(catalog_oids[i].name, name) == 0)
            return catalog_oids[i].oid;
    return 0;
}

static const char *catalog_view_name(uint32_t oid)
{
    for (size_t i = 0; i < sizeof(catalog_oids) / sizeof(catalog_oids[0]); i++)
        if (catalog_oids[i].oid == oid)
            return catalog_oids[i].name;
    return NULL;
}

/* The views' parses, made once per process and never freed: each a
 * SELECT, read by every session. */
static PgQuery__ParseResult *view_trees[NVIEWS];
static pthread_once_t view_once = PTHREAD_ONCE_INIT;

static void views_parse(void)
{
    for (size_t i = 0; i < NVIEWS; i++) {
        PgQueryProtobufParseResult r = pg_query_parse_protobuf(views[i].text);
        if (r.error == NULL)
            view_trees[i] = pg_query__parse_result__unpack(
                NULL, r.parse_tree.len, (const uint8_t *)r.parse_tree.data);
        pg_query_free_protobuf_parse_result(r);
    }
}

bool sql_catalog_is_info_view(const char *name)
{
    static const char prefix[] = "information_schema.";

    for (size_t i = 0; i < NVIEWS; i++)
        if (strncmp(views[i].name, prefix, sizeof(prefix) - 1) == 0 &&
            strcmp(views[i].name + sizeof(prefix) - 1, name) == 0)
            return true;
    return false;
}

bool sql_catalog_is_view(const char *name)
{
    /* Every table's name is asked about: most answer here. */
    if (strncmp(name, "pg_", 3) != 0)
        return strcmp(name, "keel_stat_catcache") == 0 ||
               strcmp(name, "keel_stat_wal") == 0;
    for (size_t i = 0; i < NVIEWS; i++)
        if (strcmp(views[i].name, name) == 0)
            return true;
    for (size_t i = 0; i < NCONST; i++)
        if (strcmp(const_views[i].name, name) == 0)
            return true;
    return false;
}

static keel_status const_view_rows(sql_session *s, const sql_const_view *v,
                                   bool describe, sql_rowset *out)
{
    sql_value row[sizeof(v->cols) / sizeof(v->cols[0])];
    keel_status rc;

    memset(out, 0, sizeof(*out));
    out->ncols = v->ncols;
    out->cols = sql_alloc(&s->arena, v->ncols * sizeof(*out->cols));
    out->types = sql_alloc(&s->arena, v->ncols * sizeof(uint32_t));
    if (out->cols == NULL || out->types == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    memset(out->cols, 0, v->ncols * sizeof(*out->cols));
    for (uint16_t c = 0; c < v->ncols; c++) {
        snprintf(out->cols[c].name, sizeof(out->cols[c].name), "%s", v->cols[c]);
        out->cols[c].type = KEEL_TEXT;
        out->types[c] = v->types[c];
    }
    for (uint16_t r = 0; !describe && r < v->nrows; r++) {
        for (uint16_t c = 0; c < v->ncols; c++) {
            const char *t = v->rows[r][c];
            memset(&row[c], 0, sizeof(row[c]));
            row[c].type = SQL_TYPE_UNKNOWN;
            row[c].isnull = t == NULL;
            if (t != NULL) {
                row[c].v.s.p = t;
                row[c].v.s.len = (uint32_t)strlen(t);
            }
            rc = sql_value_cast(s, &row[c], v->types[c], -1, true, -1);
            if (rc != KEEL_OK)
                return rc;
        }
        rc = sql_rowset_add(s, out, row);
        if (rc != KEEL_OK)
            return rc;
    }
    return KEEL_OK;
}

keel_status sql_catalog_view_rows(sql_session *s, const char *name,
                                  bool describe, sql_rowset *out)
{
    if (strcmp(name, "keel_stat_catcache") == 0)
        return sql_stat_catcache_rows(s, describe, out);
    if (strcmp(name, "keel_stat_wal") == 0)
        return sql_stat_wal_rows(s, describe, out);
    for (size_t i = 0; i < NCONST; i++)
        if (strcmp(const_views[i].name, name) == 0)
            return const_view_rows(s, &const_views[i], describe, out);
    pthread_once(&view_once, views_parse);
    for (size_t i = 0; i < NVIEWS; i++) {
        const PgQuery__ParseResult *t = view_trees[i];
        const char *text = s->text;
        keel_status rc;
        if (strcmp(views[i].name, name) != 0)
            continue;
        if (views[i].needs != NULL) {
            const char *dot = strchr(views[i].needs, '.');
            char schema[KEEL_NAME_LEN];
            bool exists = false;
            size_t n = (size_t)(dot - views[i].needs);
            memcpy(schema, views[i].needs, n);
            schema[n] = '\0';
            rc = keel_relation_exists(s->ks, schema, dot + 1, &exists);
            if (rc != KEEL_OK && rc != KEEL_ENOENT)
                return sql_fail_engine(s, rc);
            if (!exists)
                continue;
        }
        if (t == NULL || t->n_stmts != 1 ||
            t->stmts[0]->stmt->node_case != PG_QUERY__NODE__NODE_SELECT_STMT)
            return sql_fail(s, KEEL_ENOMEM, "53200",
                            "out of memory reading view %s", name);
        /* Positions in the view's text are no positions in the query. */
        s->text = NULL;
        rc = sql_select_rows(s, t->stmts[0]->stmt->select_stmt, NULL, NULL,
                             describe, out);
        s->text = text;
        return rc;
    }
    return sql_fail(s, KEEL_ENOENT, "42P01",
                    "relation \"pg_catalog.%s\" does not exist", name);
}

/* The name (and namespace oid) of the relation relid, *found false if
 * there is none; its kind ('t' or 'i') in *kind when kind is not NULL. */
static keel_status class_by_oid_kind(sql_session *s, uint32_t relid,
                                     char *name, uint32_t *nsp, char *kind,
                                     bool *found)
{
    keel_value key = {.isnull = false, .v.oid = relid}, row[8];
    keel_bound b = {.vals = &key, .ncols = 1, .inclusive = true};
    keel_scan *sc = NULL;
    keel_status rc;

    rc = keel_scan_begin(s->ks, "keel_catalog", "keel_class",
                         "keel_class_oid_index", &b, &b, &sc);
    if (rc == KEEL_OK)
        rc = keel_scan_next(sc, row, found);
    if (rc == KEEL_OK && *found) {
        snprintf(name, KEEL_NAME_LEN, "%.*s", (int)row[1].v.s.len,
                 row[1].v.s.ptr);
        *nsp = row[2].v.oid;
        if (kind != NULL)
            *kind = row[4].v.s.len > 0 ? row[4].v.s.ptr[0] : '?';
    }
    keel_scan_end(sc);
    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}

static keel_status class_by_oid(sql_session *s, uint32_t relid, char *name,
                                uint32_t *nsp, bool *found)
{
    return class_by_oid_kind(s, relid, name, nsp, NULL, found);
}

/* The name of namespace nsp ("" if there is none). */
static keel_status namespace_name(sql_session *s, uint32_t nsp, char *name)
{
    keel_value key = {.isnull = false, .v.oid = nsp}, row[2];
    keel_bound b = {.vals = &key, .ncols = 1, .inclusive = true};
    keel_scan *sc = NULL;
    bool found = false;
    keel_status rc;

    name[0] = '\0';
    rc = keel_scan_begin(s->ks, "keel_catalog", "keel_namespace",
                         "keel_namespace_oid_index", &b, &b, &sc);
    if (rc == KEEL_OK)
        rc = keel_scan_next(sc, row, &found);
    if (rc == KEEL_OK && found)
        snprintf(name, KEEL_NAME_LEN, "%.*s", (int)row[1].v.s.len,
                 row[1].v.s.ptr);
    keel_scan_end(sc);
    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}

keel_status sql_relation_by_oid(sql_session *s, uint32_t relid, char *schema,
                                char *name, bool *found)
{
    uint32_t nsp = 0;
    keel_status rc = class_by_oid(s, relid, name, &nsp, found);

    if (rc == KEEL_OK && *found)
        rc = namespace_name(s, nsp, schema);
    return rc;
}

keel_status sql_catalog_visible(sql_session *s, uint32_t relid, bool *out)
{
    char name[KEEL_NAME_LEN], nsp_name[KEEL_NAME_LEN];
    uint32_t nsp = 0;
    bool found = false, in_catalog = false;
    keel_status rc;

    *out = false;
    rc = class_by_oid(s, relid, name, &nsp, &found);
    if (rc != KEEL_OK || !found)
        return rc;
    rc = namespace_name(s, nsp, nsp_name);
    if (rc != KEEL_OK)
        return rc;
    /* An unqualified name finds pg_catalog's views, then keel_catalog's
     * tables, then public's. */
    if (sql_catalog_is_view(name))
        return KEEL_OK;
    if (strcmp(nsp_name, "keel_catalog") == 0) {
        *out = true;
        return KEEL_OK;
    }
    if (strcmp(nsp_name, "public") != 0)
        return KEEL_OK;
    rc = keel_relation_exists(s->ks, "keel_catalog", name, &in_catalog);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    *out = !in_catalog;
    return KEEL_OK;
}

/* The schema and name of relation relid as text ("schema.name" unless
 * visible), in the arena; *out NULL if there is none. */
keel_status sql_catalog_relname(sql_session *s, uint32_t relid,
                                const char **out)
{
    char name[KEEL_NAME_LEN], nsp_name[KEEL_NAME_LEN];
    uint32_t nsp = 0;
    bool found = false, visible = false;
    char *p;
    keel_status rc;

    *out = NULL;
    rc = class_by_oid(s, relid, name, &nsp, &found);
    if (rc == KEEL_OK && !found)
        *out = catalog_view_name(relid); /* pg_catalog is on every path */
    if (rc != KEEL_OK || !found)
        return rc;
    rc = sql_catalog_visible(s, relid, &visible);
    if (rc == KEEL_OK && !visible)
        rc = namespace_name(s, nsp, nsp_name);
    if (rc != KEEL_OK)
        return rc;
    p = sql_alloc(&s->arena, 2 * KEEL_NAME_LEN + 2);
    if (p == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    if (visible)
        snprintf(p, 2 * KEEL_NAME_LEN + 2, "%s", name);
    else
        snprintf(p, 2 * KEEL_NAME_LEN + 2, "%s.%s", nsp_name, name);
    *out = p;
    return KEEL_OK;
}

keel_status sql_catalog_nspname(sql_session *s, uint32_t nsp, const char **out)
{
    char *p = sql_alloc(&s->arena, KEEL_NAME_LEN);
    keel_status rc;

    *out = NULL;
    if (p == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    rc = namespace_name(s, nsp, p);
    if (rc == KEEL_OK && p[0] != '\0')
        *out = p;
    return rc;
}

keel_status sql_catalog_publishable(sql_session *s, uint32_t relid, bool *out)
{
    char name[KEEL_NAME_LEN], nsp_name[KEEL_NAME_LEN];
    uint32_t nsp = 0;
    char kind = '?';
    bool found = false;
    keel_status rc;

    *out = false;
    rc = class_by_oid_kind(s, relid, name, &nsp, &kind, &found);
    if (rc != KEEL_OK || !found || kind != 't')
        return rc;
    rc = namespace_name(s, nsp, nsp_name);
    /* A user's table, as PostgreSQL's test is (keel has no temporary or
     * unlogged ones to leave out). */
    *out = rc == KEEL_OK && strcmp(nsp_name, "keel_catalog") != 0;
    return rc;
}

keel_status sql_catalog_indexdef(sql_session *s, uint32_t indexid,
                                 int32_t column, bool constraint,
                                 const char **out)
{
    keel_value key = {.isnull = false, .v.oid = indexid}, row[6];
    keel_bound b = {.vals = &key, .ncols = 1, .inclusive = true};
    keel_table_info info;
    keel_column_info *cols;
    keel_scan *sc = NULL;
    char iname[KEEL_NAME_LEN], tname[KEEL_NAME_LEN], nsp_name[KEEL_NAME_LEN];
    char keys[256], *p;
    uint32_t relid = 0, nsp = 0;
    bool found = false, unique = false, primary = false;
    size_t cap, n;
    keel_status rc;

    *out = NULL;
    rc = keel_scan_begin(s->ks, "keel_catalog", "keel_index",
                         "keel_index_oid_index", &b, &b, &sc);
    if (rc == KEEL_OK)
        rc = keel_scan_next(sc, row, &found);
    if (rc == KEEL_OK && found) {
        relid = row[1].v.oid;
        unique = row[2].v.b;
        primary = row[3].v.b;
        snprintf(keys, sizeof(keys), "%.*s", (int)row[5].v.s.len,
                 row[5].v.s.ptr);
    }
    keel_scan_end(sc);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    if (!found || (constraint && !unique))
        return KEEL_OK;
    rc = class_by_oid(s, indexid, iname, &nsp, &found);
    if (rc == KEEL_OK)
        rc = class_by_oid(s, relid, tname, &nsp, &found);
    if (rc == KEEL_OK)
        rc = namespace_name(s, nsp, nsp_name);
    if (rc != KEEL_OK)
        return rc;
    rc = keel_table_describe(s->ks, nsp_name, tname, &info, NULL, 0);
    cols = rc == KEEL_OK ? sql_alloc(&s->arena, (info.ncols + 1u) * sizeof(*cols))
                         : NULL;
    if (rc == KEEL_OK && cols == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    if (rc == KEEL_OK)
        rc = keel_table_describe(s->ks, nsp_name, tname, &info, cols,
                                 info.ncols);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    cap = 3 * KEEL_NAME_LEN + 64 + 20 * (KEEL_NAME_LEN + 2);
    p = sql_alloc(&s->arena, cap);
    if (p == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    /* keys: the key columns' numbers, 1-based, separated by spaces. */
    n = 0;
    if (column == 0) {
        if (constraint)
            n = (size_t)snprintf(p, cap, "%s (",
                                 primary ? "PRIMARY KEY" : "UNIQUE");
        else
            n = (size_t)snprintf(p, cap, "CREATE %sINDEX %s ON %s.%s USING "
                                 "btree (",
                                 unique ? "UNIQUE " : "", iname, nsp_name,
                                 tname);
    }
    {
        const char *k = keys;
        int32_t at = 0;
        while (*k != '\0' && n + KEEL_NAME_LEN + 4 < cap) {
            char *end;
            long a = strtol(k, &end, 10);
            if (end == k)
                break;
            k = end;
            while (*k == ' ')
                k++;
            at++;
            if (a < 1 || a > info.ncols)
                continue;
            if (column == 0)
                n += (size_t)snprintf(p + n, cap - n, "%s%s", at > 1 ? ", " : "",
                                      cols[a - 1].name);
            else if (at == column)
                n += (size_t)snprintf(p + n, cap - n, "%s", cols[a - 1].name);
        }
    }
    if (column == 0)
        snprintf(p + n, cap - n, ")");
    *out = p;
    return KEEL_OK;
}
