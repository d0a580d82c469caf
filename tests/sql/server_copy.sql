-- COPY through the protocol: data from psql's input (CopyInResponse,
-- CopyData, CopyDone) and rows back out (CopyOutResponse, CopyData,
-- CopyDone), in text and CSV, a bad row failing its COPY (with its
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
COPY server_copy (id, name) FROM STDIN WITH (FORMAT csv);
5,"five, with a comma"
6,
\.
SELECT * FROM server_copy ORDER BY id;
COPY server_copy TO STDOUT;
COPY server_copy (name, id) TO STDOUT WITH (FORMAT csv);
COPY server_copy FROM STDIN;
7	seven	7
eight	8	8
\.
SELECT id FROM server_copy WHERE id >= 7;
BEGIN;
COPY server_copy FROM STDIN;
8	eight	8
\.
ROLLBACK;
SELECT id FROM server_copy WHERE id >= 7;
DROP TABLE server_copy;
