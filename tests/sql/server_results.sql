-- Results as the protocol carries them: rows of several columns and
-- types, NULLs, empty results, command tags of DML and DDL, and errors
-- with a DETAIL or a position.
CREATE TABLE server_results (id int4 PRIMARY KEY, name text, amount int8, ok bool);
INSERT INTO server_results VALUES (1, 'one', 100, true), (2, NULL, NULL, false), (3, 'three', -3, NULL);
SELECT id, name, amount, ok FROM server_results ORDER BY id;
SELECT * FROM server_results WHERE id = 2;
SELECT * FROM server_results WHERE id = 99;
UPDATE server_results SET amount = 7 WHERE id = 3;
DELETE FROM server_results WHERE id = 1;
SELECT * FROM server_results ORDER BY id;
INSERT INTO server_results VALUES (2, 'again', 0, true);
SELECT name FROM server_results WHERE id = 3 \; SELECT amount FROM server_results WHERE id = 3;
BEGIN;
INSERT INTO server_results VALUES (4, 'four', 4, true);
SELECT nosuch FROM server_results;
ROLLBACK;
SELECT * FROM server_results ORDER BY id;
SELECT 'a''b' AS quote, 'ünïcödé' AS utf8, '' AS empty;
DROP TABLE server_results;
SELECT * FROM server_results;
