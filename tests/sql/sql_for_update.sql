-- SELECT ... FOR UPDATE / FOR SHARE of one table
CREATE TABLE job (id int PRIMARY KEY, state text, prio int);
INSERT INTO job VALUES (1, 'new', 5), (2, 'new', 9), (3, 'done', 1), (4, 'new', 7);
BEGIN;
SELECT id, prio FROM job WHERE state = 'new' ORDER BY prio DESC LIMIT 1 FOR UPDATE;
UPDATE job SET state = 'running' WHERE id = 2;
SELECT * FROM job ORDER BY id FOR NO KEY UPDATE;
SELECT j.id, upper(j.state) AS s FROM job j WHERE j.prio > 4 ORDER BY 2, 1 FOR SHARE OF j;
SELECT id FROM job WHERE id = 99 FOR KEY SHARE;
SELECT count(*) FROM job FOR UPDATE;
SELECT DISTINCT state FROM job FOR UPDATE;
SELECT state FROM job GROUP BY state FOR SHARE;
SELECT id FROM job UNION SELECT 1 FOR UPDATE;
SELECT id FROM job FOR UPDATE OF nosuch;
COMMIT;
SELECT * FROM job ORDER BY id;
DROP TABLE job;
