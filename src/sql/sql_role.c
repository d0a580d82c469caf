/*
 * sql_role.c: roles and their passwords: CREATE ROLE / USER, ALTER ROLE /
 * USER ... PASSWORD, LOGIN, SUPERUSER, and DROP ROLE, kept in the table
 * keel_auth.keel_authid, and sql_role_find(), through which the server
 * reads a role's SCRAM verifier when a client logs in.
 *
 * keel_authid is an ordinary table made through the engine's API (the
 * engine keeps keel_catalog for its own catalogs), so its rows are
 * logged, transactional and recovered like any other.  It is created by
 * the first CREATE ROLE, in the statement's transaction; a database
 * without it (made before roles existed, or that never had one) simply
 * has no roles.  Its layout, PostgreSQL's pg_authid reduced to what keel
 * uses:
 *
 *   rolname name primary key, rolsuper bool, rolcanlogin bool,
 *   rolpassword text (a SCRAM-SHA-256 verifier, or null)
 *
 * A password given in plain text is hashed into a verifier here (a random
 * salt, 4096 iterations), so that no plain text is stored; one that is
 * already a verifier (what psql's \password computes on the client) is
 * stored as given; text that starts like one but does not parse is a
 * password like any other, as in PostgreSQL.
 */
#include <stdio.h>
#include <string.h>

#include "sql/scram.h"
#include "sql/sql_internal.h"

#define ROLE_SCHEMA "keel_auth"
#define ROLE_TABLE  "keel_authid"

enum {
    ROLE_COL_NAME,
    ROLE_COL_SUPER,
    ROLE_COL_LOGIN,
    ROLE_COL_PASSWORD,
    ROLE_NCOLS
};

/* What a role statement's options say; each has_ flag whether it was
 * given. */
typedef struct role_options {
    bool has_password, has_super, has_login;
    const char *password; /* NULL: PASSWORD NULL */
    bool super, login;
} role_options;

static keel_status role_notice(sql_session *s, const char *msg)
{
    if (s->sink->notice != NULL &&
        s->sink->notice(s->sink->ctx, "NOTICE", "00000", msg) != 0)
        return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
    return KEEL_OK;
}

/* Whether keel_authid exists for the transaction. */
static keel_status role_table_exists(sql_session *s, bool *exists)
{
    keel_status rc =
        keel_relation_exists(s->ks, ROLE_SCHEMA, ROLE_TABLE, exists);

    if (rc == KEEL_ENOENT) { /* no schema: no roles */
        *exists = false;
        return KEEL_OK;
    }
    return rc;
}

/* Creates keel_auth.keel_authid (and its schema) in the statement's
 * transaction unless it exists. */
static keel_status role_table_ensure(sql_session *s)
{
    static const keel_column cols[ROLE_NCOLS] = {
        {.name = "rolname", .type = KEEL_NAME, .notnull = true},
        {.name = "rolsuper", .type = KEEL_BOOL, .notnull = true},
        {.name = "rolcanlogin", .type = KEEL_BOOL, .notnull = true},
        {.name = "rolpassword", .type = KEEL_TEXT},
    };
    static const uint16_t pkey[1] = {1};
    bool exists = false;
    keel_status rc = role_table_exists(s, &exists);

    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    if (exists)
        return KEEL_OK;
    rc = keel_create_schema(s->ks, ROLE_SCHEMA);
    if (rc != KEEL_OK && rc != KEEL_EEXIST)
        return sql_fail_engine(s, rc);
    rc = keel_create_table(s->ks, ROLE_SCHEMA, ROLE_TABLE, cols, ROLE_NCOLS,
                           pkey, 1);
    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}

/* Looks role name up: *found, and its row in out (strings valid until
 * the session's next engine call). */
static keel_status role_lookup(sql_session *s, const char *name,
                               keel_value out[ROLE_NCOLS], bool *found)
{
    keel_value key = {.v.s = {.ptr = name, .len = (uint32_t)strlen(name)}};
    bool exists = false;
    keel_status rc;

    *found = false;
    rc = role_table_exists(s, &exists);
    if (rc == KEEL_OK && exists)
        rc = keel_lookup(s->ks, ROLE_SCHEMA, ROLE_TABLE, &key, out, found);
    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}

/* A role name as PostgreSQL checks it: 63 bytes at most (PostgreSQL
 * truncates; keel refuses, as it does for other names), and not pg_*. */
static keel_status role_name_check(sql_session *s, const char *name,
                                   bool creating)
{
    if (name[0] == '\0')
        return sql_fail(s, KEEL_EINVAL, "42602",
                        "zero-length delimited identifier");
    if (strlen(name) >= KEEL_NAME_LEN)
        return sql_fail(s, KEEL_ETOOBIG, "42622",
                        "role name \"%s\" is too long (at most 63 bytes)",
                        name);
    if (creating && strncmp(name, "pg_", 3) == 0) {
        keel_status rc = sql_fail(s, KEEL_EINVAL, "42939",
                                  "role name \"%s\" is reserved", name);
        if (s->err != NULL)
            snprintf(s->err->detail, sizeof(s->err->detail),
                     "Role names starting with \"pg_\" are reserved.");
        return rc;
    }
    return KEEL_OK;
}

/* A Boolean option's value (PostgreSQL 15 makes Boolean nodes; older
 * trees Integer ones). */
static bool option_bool(const PgQuery__Node *arg)
{
    if (arg == NULL)
        return true;
    if (arg->node_case == PG_QUERY__NODE__NODE_BOOLEAN)
        return arg->boolean->boolval;
    if (arg->node_case == PG_QUERY__NODE__NODE_INTEGER)
        return arg->integer->ival != 0;
    return true;
}

/* Reads a role statement's options into *o: PASSWORD, [NO]LOGIN,
 * [NO]SUPERUSER and INHERIT; the others are not supported yet (0A000),
 * and one given twice is 42601, as PostgreSQL says. */
static keel_status role_options_read(sql_session *s, PgQuery__Node **opts,
                                     size_t n, role_options *o)
{
    memset(o, 0, sizeof(*o));
    for (size_t i = 0; i < n; i++) {
        const PgQuery__DefElem *d;
        bool *has;
        char what[96];

        if (opts[i]->node_case != PG_QUERY__NODE__NODE_DEF_ELEM)
            return sql_unsupported(s, -1, "this role option");
        d = opts[i]->def_elem;
        if (strcmp(d->defname, "password") == 0)
            has = &o->has_password;
        else if (strcmp(d->defname, "superuser") == 0)
            has = &o->has_super;
        else if (strcmp(d->defname, "canlogin") == 0)
            has = &o->has_login;
        else if (strcmp(d->defname, "inherit") == 0 && option_bool(d->arg))
            continue; /* what every keel role does */
        else {
            snprintf(what, sizeof(what), "role option \"%s\"", d->defname);
            return sql_unsupported(s, d->location, what);
        }
        if (*has)
            return sql_fail_at(s, d->location, KEEL_EINVAL, "42601",
                               "conflicting or redundant options");
        *has = true;
        if (has == &o->has_password) {
            o->password = sql_node_string(d->arg); /* NULL: PASSWORD NULL */
            if (d->arg != NULL && o->password == NULL)
                return sql_unsupported(s, d->location, "this password");
        } else if (has == &o->has_super) {
            o->super = option_bool(d->arg);
        } else {
            o->login = option_bool(d->arg);
        }
    }
    return KEEL_OK;
}

/*
 * What a PASSWORD option stores, into buf: a verifier given as one is
 * checked and kept; plain text is hashed; '' clears the password, as in
 * PostgreSQL, with its notice.  *isnull when nothing is stored.
 */
static keel_status role_password_value(sql_session *s, const char *password,
                                       char buf[SCRAM_VERIFIER_MAX],
                                       bool *isnull)
{
    scram_secret sec;
    const char *why;

    *isnull = true;
    if (password == NULL)
        return KEEL_OK;
    if (password[0] == '\0')
        return role_notice(s, "empty string is not a valid password, "
                              "clearing password");
    /* Text that only looks like a verifier is a password, as PostgreSQL
     * takes it. */
    if (scram_looks_like_verifier(password) &&
        scram_secret_parse(password, &sec, &why)) {
        snprintf(buf, SCRAM_VERIFIER_MAX, "%s", password); /* it fits */
    } else if (!scram_verifier_build(password, buf)) {
        return sql_fail(s, KEEL_ENOMEM, "XX000",
                        "could not compute the SCRAM verifier");
    }
    *isnull = false;
    return KEEL_OK;
}

/* The role a RoleSpec names: a plain name, or CURRENT_USER /
 * SESSION_USER / CURRENT_ROLE (the session's user). */
static const char *role_spec_name(sql_session *s, const PgQuery__RoleSpec *r)
{
    if (r == NULL)
        return NULL;
    switch (r->roletype) {
    case PG_QUERY__ROLE_SPEC_TYPE__ROLESPEC_CSTRING:
        return r->rolename;
    case PG_QUERY__ROLE_SPEC_TYPE__ROLESPEC_CURRENT_ROLE:
    case PG_QUERY__ROLE_SPEC_TYPE__ROLESPEC_CURRENT_USER:
    case PG_QUERY__ROLE_SPEC_TYPE__ROLESPEC_SESSION_USER:
        return sql_setting_get(s, "user");
    default:
        return NULL;
    }
}

keel_status sql_role_exists(sql_session *s, const char *name, bool *found)
{
    keel_value out[ROLE_NCOLS];

    return role_lookup(s, name, out, found);
}

static keel_status role_not_found(sql_session *s, const char *name)
{
    return sql_fail(s, KEEL_ENOENT, "42704", "role \"%s\" does not exist",
                    name);
}

keel_status sql_exec_create_role(sql_session *s,
                                 const PgQuery__CreateRoleStmt *st)
{
    keel_value row[ROLE_NCOLS], old[ROLE_NCOLS];
    char verifier[SCRAM_VERIFIER_MAX];
    role_options o;
    bool found, nopw;
    keel_status rc;

    if (s->describe_only)
        return KEEL_OK; /* changes things: nothing to analyse first */
    rc = role_name_check(s, st->role, true);
    if (rc == KEEL_OK)
        rc = role_options_read(s, st->options, st->n_options, &o);
    if (rc == KEEL_OK)
        rc = role_lookup(s, st->role, old, &found);
    if (rc != KEEL_OK)
        return rc;
    if (found)
        return sql_fail(s, KEEL_EEXIST, "42710", "role \"%s\" already exists",
                        st->role);
    rc = role_password_value(s, o.has_password ? o.password : NULL, verifier,
                             &nopw);
    if (rc == KEEL_OK)
        rc = role_table_ensure(s);
    if (rc != KEEL_OK)
        return rc;
    memset(row, 0, sizeof(row));
    row[ROLE_COL_NAME].v.s.ptr = st->role;
    row[ROLE_COL_NAME].v.s.len = (uint32_t)strlen(st->role);
    row[ROLE_COL_SUPER].v.b = o.has_super && o.super;
    /* CREATE USER logs in unless told not to; CREATE ROLE does not. */
    row[ROLE_COL_LOGIN].v.b =
        o.has_login ? o.login
                    : st->stmt_type == PG_QUERY__ROLE_STMT_TYPE__ROLESTMT_USER;
    row[ROLE_COL_PASSWORD].isnull = nopw;
    row[ROLE_COL_PASSWORD].v.s.ptr = verifier;
    row[ROLE_COL_PASSWORD].v.s.len = nopw ? 0 : (uint32_t)strlen(verifier);
    rc = keel_insert(s->ks, ROLE_SCHEMA, ROLE_TABLE, row);
    if (rc == KEEL_EUNIQUE) /* another transaction made it meanwhile */
        return sql_fail(s, rc, "42710", "role \"%s\" already exists", st->role);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    return sql_complete(s, "CREATE ROLE");
}

keel_status sql_exec_alter_role(sql_session *s,
                                const PgQuery__AlterRoleStmt *st)
{
    keel_value row[ROLE_NCOLS], key;
    char verifier[SCRAM_VERIFIER_MAX];
    char name[KEEL_NAME_LEN];
    const char *spec;
    role_options o;
    bool found, nopw;
    keel_status rc;

    if (s->describe_only)
        return KEEL_OK;
    spec = role_spec_name(s, st->role);
    if (spec == NULL || spec[0] == '\0')
        return sql_unsupported(s, -1, "ALTER ROLE of this role");
    rc = role_name_check(s, spec, false);
    if (rc == KEEL_OK)
        rc = role_options_read(s, st->options, st->n_options, &o);
    if (rc != KEEL_OK)
        return rc;
    snprintf(name, sizeof(name), "%s", spec);
    rc = role_lookup(s, name, row, &found);
    if (rc != KEEL_OK)
        return rc;
    if (!found)
        return role_not_found(s, name);
    /* The row's strings live until the next engine call: the password is
     * copied before any (the name is ours). */
    if (!row[ROLE_COL_PASSWORD].isnull) {
        uint32_t n = row[ROLE_COL_PASSWORD].v.s.len;

        if (n >= sizeof(verifier))
            n = sizeof(verifier) - 1;
        memcpy(verifier, row[ROLE_COL_PASSWORD].v.s.ptr, n);
        verifier[n] = '\0';
        row[ROLE_COL_PASSWORD].v.s.ptr = verifier;
    }
    if (o.has_password) {
        rc = role_password_value(s, o.password, verifier, &nopw);
        if (rc != KEEL_OK)
            return rc;
        row[ROLE_COL_PASSWORD].isnull = nopw;
        row[ROLE_COL_PASSWORD].v.s.ptr = verifier;
        row[ROLE_COL_PASSWORD].v.s.len = nopw ? 0 : (uint32_t)strlen(verifier);
    }
    if (o.has_super)
        row[ROLE_COL_SUPER].v.b = o.super;
    if (o.has_login)
        row[ROLE_COL_LOGIN].v.b = o.login;
    row[ROLE_COL_NAME].v.s.ptr = name;
    row[ROLE_COL_NAME].v.s.len = (uint32_t)strlen(name);
    key = row[ROLE_COL_NAME];
    rc = keel_update(s->ks, ROLE_SCHEMA, ROLE_TABLE, &key, row);
    if (rc == KEEL_ENOENT) /* dropped by a transaction since committed */
        return role_not_found(s, name);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    return sql_complete(s, "ALTER ROLE");
}

keel_status sql_exec_drop_role(sql_session *s, const PgQuery__DropRoleStmt *st)
{
    const char *me = sql_setting_get(s, "user");
    keel_status rc;

    if (s->describe_only)
        return KEEL_OK;
    for (size_t i = 0; i < st->n_roles; i++) {
        const PgQuery__Node *n = st->roles[i];
        const char *name;
        keel_value row[ROLE_NCOLS], key;
        bool found;
        char msg[160];

        if (n->node_case != PG_QUERY__NODE__NODE_ROLE_SPEC ||
            n->role_spec->roletype !=
                PG_QUERY__ROLE_SPEC_TYPE__ROLESPEC_CSTRING)
            return sql_unsupported(s, -1, "DROP ROLE of this role");
        name = n->role_spec->rolename;
        rc = role_name_check(s, name, false);
        if (rc == KEEL_OK)
            rc = role_lookup(s, name, row, &found);
        if (rc != KEEL_OK)
            return rc;
        if (!found && st->missing_ok) {
            snprintf(msg, sizeof(msg), "role \"%s\" does not exist, skipping",
                     name);
            rc = role_notice(s, msg);
            if (rc != KEEL_OK)
                return rc;
            continue;
        }
        if (!found)
            return role_not_found(s, name);
        if (strcmp(name, me) == 0)
            return sql_fail(s, KEEL_EBUSY, "55006",
                            "current user cannot be dropped");
        key.isnull = false;
        key.v.s.ptr = name;
        key.v.s.len = (uint32_t)strlen(name);
        rc = keel_delete(s->ks, ROLE_SCHEMA, ROLE_TABLE, &key);
        if (rc == KEEL_ENOENT)
            return role_not_found(s, name);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
    }
    return sql_complete(s, "DROP ROLE");
}

keel_status sql_role_is_super(sql_session *s, const char *name, bool *super)
{
    keel_value row[ROLE_NCOLS];
    bool found = false;
    keel_status rc;

    *super = true;
    if (strlen(name) >= KEEL_NAME_LEN)
        return KEEL_OK; /* no role has so long a name */
    rc = role_lookup(s, name, row, &found);
    if (rc == KEEL_OK && found)
        *super = row[ROLE_COL_SUPER].v.b;
    return rc;
}

keel_status sql_role_find(sql_session *s, const char *name, sql_role *out,
                          sql_error *err)
{
    keel_value row[ROLE_NCOLS];
    sql_error *was = s->err;
    keel_status rc;
    bool found = false;

    memset(out, 0, sizeof(*out));
    s->err = err;
    if (strlen(name) >= KEEL_NAME_LEN) {
        s->err = was;
        return KEEL_OK; /* no role has so long a name */
    }
    rc = role_lookup(s, name, row, &found);
    s->err = was;
    if (rc != KEEL_OK || !found)
        return rc;
    out->exists = true;
    out->super = row[ROLE_COL_SUPER].v.b;
    out->canlogin = row[ROLE_COL_LOGIN].v.b;
    if (!row[ROLE_COL_PASSWORD].isnull &&
        row[ROLE_COL_PASSWORD].v.s.len < sizeof(out->password)) {
        memcpy(out->password, row[ROLE_COL_PASSWORD].v.s.ptr,
               row[ROLE_COL_PASSWORD].v.s.len);
        out->password[row[ROLE_COL_PASSWORD].v.s.len] = '\0';
    }
    return KEEL_OK;
}
