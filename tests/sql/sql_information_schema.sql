-- information_schema: tables, columns, views, schemata
CREATE TABLE inf_a (id serial PRIMARY KEY, name varchar(40) NOT NULL, code char(2),
  price numeric(10,2) DEFAULT 0, qty int2, big int8, ratio float8, ok boolean,
  at timestamp, atz timestamptz, d date, note text);
CREATE TABLE inf_b (x int);
CREATE VIEW inf_v AS SELECT id, name FROM inf_a;
SELECT table_catalog = current_database() AS here, table_schema, table_name, table_type,
       CASE WHEN table_type = 'BASE TABLE' THEN is_insertable_into END AS insertable, is_typed
FROM information_schema.tables WHERE table_schema = 'public' AND table_name LIKE 'inf%'
ORDER BY table_name;
SELECT column_name, ordinal_position, column_default, is_nullable, data_type,
       character_maximum_length, numeric_precision, numeric_precision_radix,
       numeric_scale, datetime_precision, udt_schema, udt_name
FROM information_schema.columns WHERE table_name = 'inf_a' ORDER BY ordinal_position;
SELECT table_name, count(*) FROM information_schema.columns
WHERE table_schema = 'public' AND table_name LIKE 'inf%' AND table_name <> 'inf_v'
GROUP BY table_name ORDER BY 1;
SELECT table_schema, table_name, check_option FROM information_schema.views WHERE table_name = 'inf_v';
SELECT schema_name FROM information_schema.schemata WHERE schema_name = 'public';
SELECT * FROM information_schema.nosuch;
DROP VIEW inf_v;
DROP TABLE inf_a;
DROP TABLE inf_b;
