-- COPY in text and CSV, both ways, and its errors; TRUNCATE.
CREATE TABLE c (id int PRIMARY KEY, name text, w double precision, d date);
COPY c FROM stdin;
1	one	1.5	2020-01-02
2	\N	\N	\N
3	tab\there	-2	2021-12-31
\.
COPY c (id, name) FROM stdin (FORMAT csv, HEADER);
id,name
10,"a, ""quoted"""
11,
\.
SELECT * FROM c ORDER BY id;
COPY c TO stdout;
COPY c (id, name) TO stdout (FORMAT csv, HEADER);
COPY c FROM stdin;
20	x	notanumber	2020-01-01
\.
COPY c FROM stdin;
21	too	few
\.
SELECT count(*) FROM c;
BEGIN;
TRUNCATE c;
SELECT count(*) FROM c;
ROLLBACK;
SELECT count(*) FROM c;
DROP TABLE c;
