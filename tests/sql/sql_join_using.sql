-- JOIN ... USING and NATURAL JOIN
CREATE TABLE ua (id int PRIMARY KEY, k int, name text);
CREATE TABLE ub (k int, id int, note text);
CREATE TABLE uc (k int, tag text);
INSERT INTO ua VALUES (1, 10, 'one'), (2, 20, 'two'), (3, 30, 'three');
INSERT INTO ub VALUES (10, 1, 'x'), (20, 2, 'y'), (20, 9, 'z'), (40, 4, 'w');
INSERT INTO uc VALUES (10, 't10'), (30, 't30');
SELECT * FROM ua JOIN ub USING (k) ORDER BY id, note;
SELECT * FROM ua JOIN ub USING (k, id) ORDER BY k;
SELECT k, ua.id, ub.id AS bid, note FROM ua LEFT JOIN ub USING (k) ORDER BY k, bid;
SELECT * FROM ua NATURAL JOIN ub ORDER BY id;
SELECT * FROM ua JOIN ub USING (k) JOIN uc USING (k) ORDER BY id;
SELECT ua.*, ub.note FROM ua JOIN ub USING (k) WHERE k = 20 ORDER BY note;
SELECT k, count(*) FROM ua JOIN ub USING (k) GROUP BY k ORDER BY k;
SELECT * FROM ua CROSS JOIN uc NATURAL JOIN ub ORDER BY 1, 2, 3;
-- errors
SELECT * FROM ua JOIN ub USING (nosuch);
SELECT * FROM ua JOIN uc USING (name);
SELECT * FROM ua JOIN ub USING (k, k);
SELECT * FROM ua JOIN ub USING (k) JOIN ub b2 USING (id);
DROP TABLE ua;
DROP TABLE ub;
DROP TABLE uc;
