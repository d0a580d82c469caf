-- Column defaults as psql's \d and information_schema show them: a string
-- literal as PostgreSQL 15 stores it, with the answers it gives.
CREATE TABLE dflt (id int PRIMARY KEY, t text DEFAULT 'x', v varchar(5) DEFAULT 'abc', c char(3) DEFAULT 'ab', i int DEFAULT '7', n int DEFAULT '-3', b bigint DEFAULT '5', s smallint DEFAULT 2, f float8 DEFAULT '1.5', nu numeric(10,2) DEFAULT '1.50', nn numeric DEFAULT '12', d date DEFAULT '2024-1-2', ts timestamp DEFAULT '2024-01-02 03:04:05', tz timestamptz DEFAULT 'epoch', bo boolean DEFAULT 'yes', j jsonb DEFAULT '{"b": 1, "a": [2]}', u uuid DEFAULT 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', by bytea DEFAULT '\x01', q text DEFAULT 'it''s', tc text DEFAULT 'y'::text, vc varchar(9) DEFAULT 'z'::varchar, nw timestamptz DEFAULT now(), ii int DEFAULT 42);
\d dflt
INSERT INTO dflt (id) VALUES (1);
SELECT t, v, c, i, n, b, s, f, nu, nn, d, ts, tz, bo, j, u, by, q, tc, vc FROM dflt;
ALTER TABLE dflt ADD COLUMN late text DEFAULT 'later', ALTER COLUMN t SET DEFAULT 'new';
SELECT column_name, column_default FROM information_schema.columns WHERE table_name = 'dflt' AND column_name IN ('t', 'late', 'v', 'j') ORDER BY column_name;
DROP TABLE dflt;
