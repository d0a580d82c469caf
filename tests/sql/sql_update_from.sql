-- UPDATE ... FROM and DELETE ... USING.
CREATE TABLE uf_acct (id int PRIMARY KEY, owner text, bal numeric NOT NULL);
CREATE TABLE uf_pay (id int PRIMARY KEY, acct int, amount numeric);
CREATE TABLE uf_owner (name text PRIMARY KEY, vip boolean);
INSERT INTO uf_acct VALUES (1, 'ann', 100), (2, 'bob', 50), (3, 'cy', 0);
INSERT INTO uf_pay VALUES (10, 1, 5), (11, 2, 7.5), (12, 1, 20), (13, 9, 1);
INSERT INTO uf_owner VALUES ('ann', true), ('bob', false), ('cy', true);
UPDATE uf_acct a SET bal = a.bal + p.amount FROM uf_pay p
WHERE p.acct = a.id AND p.id <> 12
RETURNING a.id, a.bal;
SELECT * FROM uf_acct ORDER BY id;
UPDATE uf_acct SET owner = upper(o.name) FROM uf_owner o, uf_pay p
WHERE o.name = uf_acct.owner AND o.vip AND p.acct = uf_acct.id;
SELECT * FROM uf_acct ORDER BY id;
UPDATE uf_acct SET bal = 0 FROM uf_pay WHERE false;
DELETE FROM uf_pay p USING uf_acct a WHERE p.acct = a.id AND a.owner = 'bob'
RETURNING p.id;
DELETE FROM uf_pay USING uf_owner WHERE uf_owner.vip AND uf_pay.amount > 10;
SELECT * FROM uf_pay ORDER BY id;
UPDATE uf_acct SET bal = p.nosuch FROM uf_pay p WHERE p.acct = uf_acct.id;
UPDATE uf_acct SET bal = id FROM uf_pay p WHERE p.acct = uf_acct.id;
DROP TABLE uf_acct;
DROP TABLE uf_pay;
DROP TABLE uf_owner;
