-- Table locks: LOCK TABLE, NOWAIT, lock_timeout.
CREATE TABLE lk (id integer PRIMARY KEY, v integer);
INSERT INTO lk VALUES (1, 10), (2, 20);
-- Outside a transaction block LOCK fails.
LOCK TABLE lk;
LOCK lk IN ACCESS SHARE MODE;
-- Inside one, every mode; a transaction never conflicts with itself.
BEGIN;
LOCK TABLE lk IN ACCESS SHARE MODE;
LOCK TABLE lk IN ROW SHARE MODE;
LOCK TABLE lk IN ROW EXCLUSIVE MODE;
LOCK TABLE lk IN SHARE UPDATE EXCLUSIVE MODE;
LOCK TABLE lk IN SHARE MODE NOWAIT;
LOCK TABLE lk IN SHARE ROW EXCLUSIVE MODE;
LOCK TABLE lk IN EXCLUSIVE MODE;
LOCK TABLE lk IN ACCESS EXCLUSIVE MODE NOWAIT;
LOCK lk;
SELECT v FROM lk WHERE id = 2;
UPDATE lk SET v = 21 WHERE id = 2;
COMMIT;
SELECT v FROM lk WHERE id = 2;
-- A table that does not exist fails the block.
BEGIN;
LOCK TABLE lk_missing IN SHARE MODE;
ROLLBACK;
BEGIN;
LOCK TABLE public.lk, lk IN ROW EXCLUSIVE MODE NOWAIT;
ROLLBACK;
-- lock_timeout: milliseconds by default, shown in the largest whole unit.
SHOW lock_timeout;
SET lock_timeout = '2s';
SHOW lock_timeout;
SET lock_timeout = 1500;
SHOW lock_timeout;
SET lock_timeout = '1min';
SHOW lock_timeout;
SET lock_timeout = '2000 ms';
SHOW lock_timeout;
SET lock_timeout = -1;
RESET lock_timeout;
SHOW lock_timeout;
DROP TABLE lk;
