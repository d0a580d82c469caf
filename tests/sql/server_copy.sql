-- COPY through the protocol: data from psql's input (CopyInResponse,
-- CopyData, CopyDone), rows back out (CopyOutResponse, CopyData,
-- CopyDone) in text and CSV, a bad row failing its COPY (with its
-- CONTEXT), and a COPY inside a transaction block that is rolled back.
CREATE TABLE server_copy (id int4 PRIMARY KEY, name text, n int8);
COPY server_copy FROM STDIN;
1	one	10
2	\N	20
3	three	\N
\.
COPY server_copy FROM STDIN;
4	four, with a tab\there	40
\.
SELECT * FROM server_copy ORDER BY id;
COPY server_copy TO STDOUT;
COPY server_copy (name, id) TO STDOUT WITH (FORMAT csv);
COPY server_copy FROM STDIN;
6	six	6
seven	7	7
\.
SELECT id FROM server_copy WHERE id >= 6;
BEGIN;
COPY server_copy FROM STDIN;
8	eight	8
\.
ROLLBACK;
SELECT id FROM server_copy WHERE id >= 6;
DROP TABLE server_copy;
