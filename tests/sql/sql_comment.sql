-- COMMENT ON tables, columns and indexes, and what reads comments back,
-- with the answers PostgreSQL 15 gives.
CREATE TABLE notes (id int PRIMARY KEY, body text, "Odd Name" int, gone int);
CREATE INDEX notes_body ON notes (body);
COMMENT ON TABLE notes IS 'What people wrote';
COMMENT ON COLUMN notes.body IS 'The text, as typed';
COMMENT ON COLUMN notes."Odd Name" IS 'quoted';
COMMENT ON COLUMN notes.gone IS 'to be dropped';
COMMENT ON INDEX notes_body IS 'for lookups by text';
COMMENT ON COLUMN public.notes.id IS 'key';
SELECT obj_description('notes'::regclass, 'pg_class'), obj_description('notes'::regclass), col_description('notes'::regclass, 2), col_description('notes'::regclass, 9), obj_description('notes_body'::regclass, 'pg_class'), obj_description('notes'::regclass, 'pg_type');
\d+ notes
SELECT c.relname, d.objsubid, d.description FROM pg_description d JOIN pg_class c ON c.oid = d.objoid ORDER BY 1, 2;
COMMENT ON TABLE nosuch IS 'x';
COMMENT ON COLUMN notes.nosuch IS 'x';
COMMENT ON TABLE notes_body IS 'x';
COMMENT ON INDEX notes IS 'x';
BEGIN;
COMMENT ON TABLE notes IS 'rolled back';
ROLLBACK;
SELECT obj_description('notes'::regclass, 'pg_class');
COMMENT ON COLUMN notes.body IS NULL;
COMMENT ON COLUMN notes."Odd Name" IS '';
SELECT col_description('notes'::regclass, 2), col_description('notes'::regclass, 3);
ALTER TABLE notes DROP COLUMN "Odd Name", ADD COLUMN extra int;
SELECT attname, col_description(attrelid, attnum) FROM pg_attribute WHERE attrelid = 'notes'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum;
\d+ notes
TRUNCATE notes;
SELECT obj_description('notes'::regclass, 'pg_class'), obj_description('notes_body'::regclass, 'pg_class'), (SELECT col_description(attrelid, attnum) FROM pg_attribute WHERE attrelid = 'notes'::regclass AND attname = 'gone');
DROP INDEX notes_body;
SELECT count(*) FROM pg_description d JOIN pg_class c ON c.oid = d.objoid WHERE c.relname LIKE 'notes%';
DROP TABLE notes;
SELECT count(*) FROM pg_description d JOIN pg_class c ON c.oid = d.objoid WHERE c.relname LIKE 'notes%';
