-- DISTINCT ON
CREATE TABLE ev (id int PRIMARY KEY, usr text, at timestamp, kind text, amount numeric(8,2));
INSERT INTO ev VALUES
  (1, 'ann', '2024-01-01 10:00', 'login', NULL),
  (2, 'ann', '2024-01-03 09:00', 'buy', 12.50),
  (3, 'bob', '2024-01-02 08:00', 'buy', 3.00),
  (4, 'bob', '2024-01-02 08:00', 'login', NULL),
  (5, 'cid', '2024-01-05 12:00', 'buy', 99.99),
  (6, NULL, '2024-01-04 00:00', 'login', NULL),
  (7, 'ann', '2024-01-02 11:00', 'buy', 7.25);
-- each user's latest event
SELECT DISTINCT ON (usr) usr, id, at, kind FROM ev ORDER BY usr, at DESC, id;
-- each user's largest purchase, by position and by output name
SELECT DISTINCT ON (1) usr, amount FROM ev WHERE kind = 'buy' ORDER BY 1, 2 DESC;
SELECT DISTINCT ON (who) usr AS who, amount FROM ev WHERE kind = 'buy' ORDER BY who, amount;
-- without ORDER BY: sorted by the expressions
SELECT DISTINCT ON (kind) kind FROM ev;
-- two expressions, in either order in ORDER BY
SELECT DISTINCT ON (usr, kind) usr, kind, id FROM ev ORDER BY kind, usr, id DESC;
-- an expression not in the output, with LIMIT and OFFSET
SELECT DISTINCT ON (date_trunc('day', at)) id, at FROM ev ORDER BY date_trunc('day', at), id LIMIT 3 OFFSET 1;
-- over groups
SELECT DISTINCT ON (n) n, kind FROM (SELECT kind, count(*) AS n FROM ev GROUP BY kind) g ORDER BY n, kind;
SELECT DISTINCT ON (usr) usr, count(*) FROM ev GROUP BY usr, kind ORDER BY usr, count(*) DESC;
-- errors
SELECT DISTINCT ON (usr) usr, id FROM ev ORDER BY id;
SELECT DISTINCT ON (3) usr FROM ev;
SELECT DISTINCT ON (nosuch) usr FROM ev;
SELECT DISTINCT ON (a, b) a, b FROM (VALUES (1, 2), (1, 3), (2, 2)) v(a, b) ORDER BY b, a DESC;
SELECT DISTINCT ON (a) a, b FROM (VALUES (1, 2), (1, 3), (2, 2)) v(a, b) ORDER BY a, b DESC, a;
SELECT DISTINCT ON (a, b) a, b FROM (VALUES (1, 2), (1, 3), (2, 2)) v(a, b) ORDER BY a;
SELECT DISTINCT ON (b) a, b FROM (VALUES (1, 2), (1, 3), (2, 2)) v(a, b) ORDER BY a, b;
DROP TABLE ev;
