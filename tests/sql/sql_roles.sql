-- Roles: CREATE ROLE / USER, ALTER ROLE / USER and DROP ROLE, and their
-- errors (passwords are checked by logging in: test_server_auth).
CREATE ROLE regress_alice;
CREATE ROLE regress_bob WITH LOGIN PASSWORD 'secret';
CREATE USER regress_carol PASSWORD 'pw' SUPERUSER;
CREATE ROLE regress_dave LOGIN PASSWORD 'SCRAM-SHA-256$4096:HxbvwrtxlnrKVGpTj4ybDg==$6jjiQYx91Q/FR24psMQBWDgLjgZ6Y0QKCplNocRnQ/w=:HbsZROc1Fo/3zL7GRe5uveA7+tQ0m6wXJeWq0tN2vp4=';
CREATE GROUP regress_group;
-- Errors: a role that exists, options given twice, reserved names.
CREATE ROLE regress_alice;
CREATE USER regress_bob;
CREATE ROLE regress_x LOGIN NOLOGIN;
CREATE ROLE regress_x PASSWORD 'a' PASSWORD 'b';
CREATE ROLE pg_mine;
-- An empty password is no password.
CREATE ROLE regress_erin PASSWORD '';
ALTER ROLE regress_alice PASSWORD 'new';
ALTER ROLE regress_alice WITH LOGIN;
ALTER ROLE regress_alice NOLOGIN SUPERUSER;
ALTER USER regress_bob PASSWORD NULL;
ALTER ROLE regress_erin ENCRYPTED PASSWORD 'e';
ALTER ROLE regress_nobody PASSWORD 'x';
ALTER USER regress_nobody WITH LOGIN;
-- Role statements are transactional.
BEGIN;
CREATE ROLE regress_frank;
ALTER ROLE regress_frank PASSWORD 'f';
ROLLBACK;
ALTER ROLE regress_frank PASSWORD 'f';
BEGIN;
DROP ROLE regress_alice;
ROLLBACK;
ALTER ROLE regress_alice PASSWORD 'still here';
-- pg_roles lists them.
SELECT rolname, rolsuper, rolcanlogin, rolconnlimit, rolvaliduntil FROM pg_roles WHERE rolname LIKE 'regress%' ORDER BY 1;
DROP ROLE regress_frank;
DROP ROLE IF EXISTS regress_frank, regress_alice;
DROP ROLE regress_alice;
DROP ROLE regress_bob, regress_nobody;
DROP ROLE regress_bob, regress_carol, regress_dave, regress_erin, regress_group;
DROP ROLE IF EXISTS regress_bob;
