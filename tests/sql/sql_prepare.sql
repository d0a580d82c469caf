-- PREPARE, EXECUTE and DEALLOCATE.
CREATE TABLE pp_t (id int PRIMARY KEY, v text, n numeric);
PREPARE ins (int, text, numeric) AS INSERT INTO pp_t VALUES ($1, $2, $3);
EXECUTE ins (1, 'one', 1.5);
EXECUTE ins (2, 'two', '2.25');
EXECUTE ins(3, 'th' || 'ree', 3 * 2);
PREPARE sel AS SELECT id, v, n FROM pp_t WHERE id >= $1 ORDER BY id;
EXECUTE sel (2);
EXECUTE sel ('1');
PREPARE upd (int) AS UPDATE pp_t SET n = n + 1 WHERE id = $1 RETURNING *;
EXECUTE upd (1);
PREPARE noargs AS SELECT count(*) FROM pp_t;
EXECUTE noargs;
-- Errors.
EXECUTE sel;
EXECUTE sel (1, 2);
EXECUTE nosuch (1);
EXECUTE ins (4, 'four', 'x');
PREPARE sel AS SELECT 1;
DEALLOCATE sel;
EXECUTE sel (1);
DEALLOCATE sel;
DEALLOCATE PREPARE noargs;
DEALLOCATE ALL;
EXECUTE upd (1);
DROP TABLE pp_t;
