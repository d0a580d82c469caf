-- Sequences: CREATE / DROP SEQUENCE, nextval, currval, setval, lastval,
-- SERIAL columns; values are not given back by a rollback.
CREATE SEQUENCE sq1;
SELECT nextval('sq1'), nextval('sq1'), currval('sq1'), lastval();
SELECT setval('sq1', 100), nextval('sq1');
SELECT setval('sq1', 7, false), nextval('sq1'), nextval('sq1');
BEGIN;
SELECT nextval('sq1');
ROLLBACK;
SELECT nextval('sq1');
CREATE SEQUENCE sq2 START 5 INCREMENT BY -2 MINVALUE 0 MAXVALUE 10 CYCLE;
SELECT nextval('sq2'), nextval('sq2'), nextval('sq2'), nextval('sq2');
CREATE SEQUENCE sq3 AS smallint INCREMENT 10000 START 30000;
SELECT nextval('sq3');
SELECT nextval('sq3');
CREATE SEQUENCE IF NOT EXISTS sq1;
CREATE SEQUENCE sq1;
CREATE SEQUENCE sq4 INCREMENT 0;
CREATE SEQUENCE sq4 MINVALUE 10 MAXVALUE 5;
CREATE SEQUENCE sq4 START 3 MINVALUE 5;
CREATE SEQUENCE sq4;
SELECT currval('sq4');
SELECT setval('sq4', 0);
-- SERIAL columns.
CREATE TABLE sq_t (id serial PRIMARY KEY, b bigserial, s smallserial, v text);
INSERT INTO sq_t (v) VALUES ('a'), ('b') RETURNING *;
INSERT INTO sq_t (id, v) VALUES (100, 'explicit');
INSERT INTO sq_t (v) VALUES ('c') RETURNING id, b, s;
SELECT currval('sq_t_id_seq'), currval('sq_t_b_seq');
\d sq_t
BEGIN;
INSERT INTO sq_t (v) VALUES ('rolled back');
ROLLBACK;
INSERT INTO sq_t (v) VALUES ('d') RETURNING id;
TRUNCATE sq_t;
INSERT INTO sq_t (v) VALUES ('after truncate') RETURNING id;
CREATE TABLE sq_bad (id serial DEFAULT 5);
DROP TABLE sq_t;
CREATE TABLE sq_t (id serial, v text);
INSERT INTO sq_t (v) VALUES ('new table') RETURNING id;
DROP TABLE sq_t;
DROP SEQUENCE sq1, sq2;
DROP SEQUENCE sq3;
DROP SEQUENCE sq4;
DROP SEQUENCE IF EXISTS sq1;
DROP SEQUENCE sq1;
