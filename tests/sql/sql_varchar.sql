-- varchar(n): a length checked on assignment, cut by explicit casts
CREATE TABLE vc (id int PRIMARY KEY, v varchar(5), w varchar, c char(3));
INSERT INTO vc VALUES (1, 'abc', 'anything at all', 'x');
INSERT INTO vc VALUES (2, 'abcde', 'w', 'yz');
INSERT INTO vc VALUES (3, 'abcdef', 'w', 'z');
INSERT INTO vc VALUES (4, 'abc     ', 'w', 'z');
INSERT INTO vc VALUES (5, 'ñäöüß', 'w', 'z');
INSERT INTO vc VALUES (6, 'ñäöüßx', 'w', 'z');
UPDATE vc SET v = v || 'xyz' WHERE id = 1;
UPDATE vc SET v = 'toolong' WHERE id = 1;
SELECT id, v, length(v), w, c FROM vc ORDER BY id;
SELECT 'abcdefgh'::varchar(3), CAST('abcdefgh' AS varchar(4));
COPY vc FROM STDIN;
7	short	w	c
8	toolong	w	c
\.
SELECT count(*) FROM vc;
CREATE TABLE vc0 (v varchar(0));
DROP TABLE vc;
