-- Views: CREATE [OR REPLACE] VIEW, queried as tables are, DROP VIEW.
CREATE TABLE vw_t (id int PRIMARY KEY, grp text, n int);
INSERT INTO vw_t VALUES (1, 'a', 10), (2, 'a', 20), (3, 'b', 5);
CREATE VIEW vw_sum AS SELECT grp, sum(n) AS total, count(*) AS rows FROM vw_t GROUP BY grp;
SELECT * FROM vw_sum ORDER BY grp;
CREATE VIEW vw_big (ident, amount) AS SELECT id, n FROM vw_t WHERE n >= 10;
SELECT * FROM vw_big ORDER BY ident;
SELECT b.ident, s.total FROM vw_big b JOIN vw_t t ON t.id = b.ident
  JOIN vw_sum s ON s.grp = t.grp ORDER BY 1;
SELECT x.i FROM vw_big AS x(i) WHERE x.i > 1;
INSERT INTO vw_t VALUES (4, 'b', 50);
SELECT * FROM vw_big ORDER BY ident;
WITH w AS (SELECT max(amount) AS m FROM vw_big) SELECT m FROM w;
BEGIN;
CREATE VIEW vw_tmp AS SELECT 1 AS one;
SELECT * FROM vw_tmp;
ROLLBACK;
SELECT * FROM vw_tmp;
CREATE OR REPLACE VIEW vw_big AS SELECT id, n FROM vw_t WHERE n > 15;
CREATE OR REPLACE VIEW vw_big (ident, amount, grp) AS
  SELECT id, n, grp FROM vw_t WHERE n > 15;
SELECT * FROM vw_big ORDER BY ident;
CREATE OR REPLACE VIEW vw_big AS SELECT id FROM vw_t;
CREATE OR REPLACE VIEW vw_big (ident, amount, grp) AS
  SELECT id, n::text, grp FROM vw_t;
CREATE VIEW vw_big AS SELECT 1;
CREATE VIEW vw_t AS SELECT 1;
CREATE TABLE vw_sum (x int);
CREATE VIEW vw_bad AS SELECT nosuch FROM vw_t;
CREATE VIEW vw_cols (a, b, c) AS SELECT id FROM vw_t;
DROP VIEW vw_sum, vw_big;
DROP VIEW vw_sum;
DROP VIEW IF EXISTS vw_sum;
DROP TABLE vw_t;
