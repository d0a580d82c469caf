/*
 * sql_parse.c: text into parse trees, and the session's cache of them.
 *
 * libpg_query parses a statement like pgbench's select-only one in about
 * 10 us (README.md, "What parsing costs"), several times what keel then
 * spends running it.  Clients of the simple protocol send the same
 * statements again and again with other constants in them, so a session
 * keeps the trees of the texts it parsed last, keyed by the text with its
 * constants taken out, and reuses a tree by writing the new constants
 * into it.
 *
 * The key is the text byte for byte, except that every numeric or quoted
 * string constant becomes a marker of its lexical class: an integer that
 * fits in 32 bits ('i'), any other number ('f'), a string ('s'), the
 * three tokens PostgreSQL's grammar tells apart.  Two texts with the same
 * key therefore reach the grammar as the same token sequence, so their
 * trees differ only where a grammar rule used a constant's value.  When a
 * text is first parsed, each constant must be found in the tree as an
 * A_Const at the constant's own position, of its class: then the value is
 * only copied, never used, and writing another value there gives the tree
 * the grammar would have built.  A negated number ("-5") is found at its
 * minus sign, where the grammar folds the two into one constant, and is
 * written back negated.  A text where some constant is not found so (a
 * length the grammar reads, as in float(24); strings concatenated across
 * lines; an E'...' string, whose token starts at its prefix) is
 * remembered as not cacheable and parsed every time.
 *
 * Nothing in keel writes to a parse tree, so the cached tree can be
 * analysed and run as a fresh one would be.  Positions in it stay those
 * of the text first parsed; the session translates them into the current
 * text's when it reports an error (sql_parse_location()).
 */
#include <stdlib.h>
#include <string.h>

#include "port/hash.h"
#include "sql/sql_internal.h"

/* Texts longer than this, or with more constants, are not cached. */
#define PCACHE_MAX_TEXT 8192
#define PCACHE_MAX_LITS 1024
/* How deep a tree is walked for its constants. */
#define PCACHE_MAX_DEPTH 512

/* A constant of the text: where it is, and its lexical class. */
typedef struct pcache_lit {
    uint32_t start, len;
    int32_t minus_at; /* a '-' just before it (spaces between), or -1 */
    char cls;         /* 'i', 'f' or 's' */
} pcache_lit;

/* One A_Const of a cached tree, and the string it held when parsed. */
typedef struct pcache_const {
    PgQuery__AConst *c;
    char *orig; /* fval's or sval's own string; NULL for an integer */
} pcache_const;

/* Per constant of the key: its A_Consts, and the value written there. */
typedef struct pcache_slot {
    uint32_t orig_start, orig_len; /* in the text first parsed */
    uint32_t cur_start, cur_len;   /* in the text last written in */
    uint32_t first, n;             /* its entries in consts */
    char cls;
    bool neg;  /* its A_Consts are the grammar's negation of it */
    char *buf; /* the value now in its A_Consts (strings), malloc'd */
    size_t cap;
} pcache_slot;

struct sql_pcache_entry {
    uint64_t hash;
    char *key; /* malloc'd */
    uint32_t key_len;
    PgQuery__ParseResult *tree; /* NULL: the key is not cacheable */
    pcache_slot *slots;
    uint16_t nslots;
    pcache_const *consts;
    uint32_t nconsts;
    uint64_t used; /* the session's parse count at its last use */
    uint32_t pins; /* users of its tree: a statement running, prepared ones */
};

/* The session's cache: a few entries, the least recently used replaced. */
struct sql_pcache {
    sql_pcache_entry **entries;
    uint32_t n, cap;
    uint64_t clock;
    uint64_t hits, misses, uncacheable;
    /* The last text lexed: its key and constants. */
    char *key;
    size_t key_cap;
    pcache_lit *lits;
    uint32_t nlits, lits_cap;
};

/* ---- parsing ------------------------------------------------------------ */

keel_status sql_parse_raw(sql_session *s, const char *text,
                          PgQuery__ParseResult **out)
{
    PgQueryProtobufParseResult r = pg_query_parse_protobuf(text);
    keel_status rc = KEEL_OK;

    *out = NULL;
    if (r.error != NULL) {
        rc = sql_fail_at(s, r.error->cursorpos > 0 ? r.error->cursorpos - 1 : -1,
                         KEEL_EINVAL, "42601", "%s", r.error->message);
    } else {
        *out = pg_query__parse_result__unpack(NULL, r.parse_tree.len,
                                              (const uint8_t *)r.parse_tree.data);
        if (*out == NULL)
            rc = sql_fail(s, KEEL_ENOMEM, "53200",
                          "out of memory reading the parse tree");
    }
    pg_query_free_protobuf_parse_result(r);
    return rc;
}

/* ---- the key ------------------------------------------------------------ */

static bool is_ident_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           c >= 0x80;
}

static bool is_ident_cont(unsigned char c)
{
    return is_ident_start(c) || (c >= '0' && c <= '9') || c == '$';
}

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static bool key_put(struct sql_pcache *pc, size_t *len, const char *p, size_t n)
{
    if (*len + n > pc->key_cap) {
        size_t cap = pc->key_cap < 256 ? 256 : pc->key_cap;
        char *k;
        while (cap < *len + n)
            cap *= 2;
        k = realloc(pc->key, cap);
        if (k == NULL)
            return false;
        pc->key = k;
        pc->key_cap = cap;
    }
    memcpy(pc->key + *len, p, n);
    *len += n;
    return true;
}

static bool lit_put(struct sql_pcache *pc, const char *text, uint32_t start,
                    uint32_t len, char cls)
{
    int32_t minus_at = -1, j = (int32_t)start - 1;

    if (pc->nlits == pc->lits_cap) {
        uint32_t cap = pc->lits_cap < 16 ? 16 : pc->lits_cap * 2;
        pcache_lit *l = realloc(pc->lits, cap * sizeof(*l));
        if (l == NULL)
            return false;
        pc->lits = l;
        pc->lits_cap = cap;
    }
    while (j >= 0 && (text[j] == ' ' || text[j] == '\t' || text[j] == '\n' ||
                      text[j] == '\r' || text[j] == '\f' || text[j] == '\v'))
        j--;
    if (cls != 's' && j >= 0 && text[j] == '-')
        minus_at = j;
    pc->lits[pc->nlits++] = (pcache_lit){start, len, minus_at, cls};
    return true;
}

/* Whether the digits p[0..n) are an integer PostgreSQL's lexer reads as
 * a 32-bit one (else it is a float constant, kept as its text). */
static bool fits_int32(const char *p, size_t n)
{
    int64_t v = 0;

    for (size_t i = 0; i < n; i++) {
        v = v * 10 + (p[i] - '0');
        if (v > INT32_MAX)
            return false;
    }
    return true;
}

/* The bytes that start no token lex_key() looks into: all but letters,
 * digits, '_', bytes of multibyte characters, quotes, '$', '.', '-',
 * '/', NUL and 0x01. */
static const bool lex_plain[256] = {
    [' '] = true,  ['\t'] = true, ['\n'] = true, ['\r'] = true, ['\f'] = true,
    ['\v'] = true, ['='] = true,  ['<'] = true,  ['>'] = true,  ['+'] = true,
    ['*'] = true,  ['%'] = true,  ['^'] = true,  ['('] = true,  [')'] = true,
    [','] = true,  [';'] = true,  ['['] = true,  [']'] = true,  [':'] = true,
    ['!'] = true,  ['~'] = true,  ['@'] = true,  ['#'] = true,  ['&'] = true,
    ['|'] = true,  ['`'] = true,  ['?'] = true,  ['{'] = true,  ['}'] = true,
};

/*
 * Lexes text into pc's key and constants, as PostgreSQL's lexer splits
 * it.  False when the text cannot be cached: too long, a dollar-quoted
 * or prefixed string, a number with junk after it, an unterminated
 * quote or comment, or memory ran out.
 */
static bool lex_key(struct sql_pcache *pc, const char *text, size_t *key_len)
{
    size_t n = strlen(text), len = 0, i = 0, copied = 0;

    pc->nlits = 0;
    if (n > PCACHE_MAX_TEXT)
        return false;
    while (i < n) {
        unsigned char c = (unsigned char)text[i];
        /* Blanks, operators and punctuation go into the key as they are:
         * skipped in one go. */
        if (lex_plain[c]) {
            do
                i++;
            while (i < n && lex_plain[(unsigned char)text[i]]);
            continue;
        }
        if (c == 0x01)
            return false;
        if (c == '-' && i + 1 < n && text[i + 1] == '-') {
            while (i < n && text[i] != '\n')
                i++;
        } else if (c == '/' && i + 1 < n && text[i + 1] == '*') {
            int depth = 0;
            while (i < n) {
                if (text[i] == '/' && i + 1 < n && text[i + 1] == '*') {
                    depth++;
                    i += 2;
                } else if (text[i] == '*' && i + 1 < n && text[i + 1] == '/') {
                    i += 2;
                    if (--depth == 0)
                        break;
                } else {
                    i++;
                }
            }
            if (depth != 0)
                return false;
        } else if (c == '"') {
            i++;
            for (;;) {
                if (i >= n)
                    return false;
                if (text[i] == '"') {
                    if (i + 1 < n && text[i + 1] == '"') {
                        i += 2;
                        continue;
                    }
                    i++;
                    break;
                }
                i++;
            }
        } else if (is_ident_start(c)) {
            size_t start = i;
            while (i < n && is_ident_cont((unsigned char)text[i]))
                i++;
            /* E'..', B'..', X'..', N'..', U&'..', U&"..": a string or
             * name whose token starts at its prefix. */
            if (i < n && text[i] == '\'')
                return false;
            if (i - start == 1 && (c == 'U' || c == 'u') && i + 1 < n &&
                text[i] == '&' && (text[i + 1] == '\'' || text[i + 1] == '"'))
                return false;
        } else if (c == '$') {
            i++;
            if (i >= n || !is_digit((unsigned char)text[i]))
                return false; /* a dollar quote */
            while (i < n && is_digit((unsigned char)text[i]))
                i++;
        } else if (c == '\'' || is_digit(c) ||
                   (c == '.' && i + 1 < n && is_digit((unsigned char)text[i + 1]))) {
            size_t start = i;
            char cls;
            if (c == '\'') {
                i++;
                for (;;) {
                    if (i >= n)
                        return false;
                    if (text[i] == '\'') {
                        if (i + 1 < n && text[i + 1] == '\'') {
                            i += 2;
                            continue;
                        }
                        i++;
                        break;
                    }
                    i++;
                }
                cls = 's';
            } else {
                bool real = false;
                while (i < n && is_digit((unsigned char)text[i]))
                    i++;
                if (i < n && text[i] == '.') {
                    if (i + 1 < n && text[i + 1] == '.')
                        return false; /* 1..2 */
                    real = true;
                    i++;
                    while (i < n && is_digit((unsigned char)text[i]))
                        i++;
                }
                if (i < n && (text[i] == 'e' || text[i] == 'E')) {
                    real = true;
                    i++;
                    if (i < n && (text[i] == '+' || text[i] == '-'))
                        i++;
                    if (i >= n || !is_digit((unsigned char)text[i]))
                        return false;
                    while (i < n && is_digit((unsigned char)text[i]))
                        i++;
                }
                if (i < n && (is_ident_cont((unsigned char)text[i]) ||
                              text[i] == '.'))
                    return false;
                cls = !real && fits_int32(text + start, i - start) ? 'i' : 'f';
            }
            if (pc->nlits == PCACHE_MAX_LITS)
                return false;
            {
                char marker[2] = {0x01, cls};
                if (!key_put(pc, &len, text + copied, start - copied) ||
                    !key_put(pc, &len, marker, 2) ||
                    !lit_put(pc, text, (uint32_t)start, (uint32_t)(i - start), cls))
                    return false;
            }
            copied = i;
        } else {
            i++;
        }
    }
    if (!key_put(pc, &len, text + copied, n - copied))
        return false;
    *key_len = len;
    return true;
}

/* ---- finding the constants in a tree ------------------------------------ */

typedef struct find_ctx {
    const pcache_lit *lits;
    uint32_t nlits;
    uint32_t *count;      /* per constant: A_Consts found */
    pcache_const *consts; /* NULL while counting */
    uint32_t *fill;       /* per constant: next slot in consts */
    const uint32_t *first;
    uint8_t *neg; /* per constant: 0 not found yet, 1 as is, 2 negated */
    bool ok;
} find_ctx;

static int32_t lit_at(const find_ctx *f, int32_t location)
{
    uint32_t lo = 0, hi = f->nlits;

    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if ((int32_t)f->lits[mid].start < location)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < f->nlits && (int32_t)f->lits[lo].start == location ? (int32_t)lo
                                                                    : -1;
}

/* The constant after a '-' at location, whose negation the grammar made
 * a constant there ("-5"), or -1. */
static int32_t lit_negated_at(const find_ctx *f, int32_t location)
{
    uint32_t lo = 0, hi = f->nlits;

    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if ((int32_t)f->lits[mid].start <= location)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < f->nlits && f->lits[lo].minus_at == location ? (int32_t)lo : -1;
}

static void visit_const(find_ctx *f, PgQuery__AConst *c)
{
    int32_t k = lit_at(f, c->location);
    bool neg = false;
    char cls;

    if (k < 0) {
        k = lit_negated_at(f, c->location);
        if (k < 0)
            return; /* a keyword's (NULL, TRUE) or the grammar's own */
        neg = true;
    }
    /* A constant is either negated everywhere it is used, or nowhere. */
    if (f->neg[k] != 0 && f->neg[k] != (neg ? 2 : 1)) {
        f->ok = false;
        return;
    }
    f->neg[k] = neg ? 2 : 1;
    cls = f->lits[k].cls;
    if (c->isnull || (cls == 'i' && (c->val_case != PG_QUERY__A__CONST__VAL_IVAL ||
                                     c->ival == NULL)) ||
        (cls == 'f' && (c->val_case != PG_QUERY__A__CONST__VAL_FVAL ||
                        c->fval == NULL)) ||
        (cls == 's' && (c->val_case != PG_QUERY__A__CONST__VAL_SVAL ||
                        c->sval == NULL))) {
        f->ok = false;
        return;
    }
    if (f->consts == NULL) {
        f->count[k]++;
    } else {
        pcache_const *pc = &f->consts[f->first[k] + f->fill[k]++];
        pc->c = c;
        pc->orig = cls == 'i' ? NULL : cls == 'f' ? c->fval->fval : c->sval->sval;
    }
}

static void walk(find_ctx *f, ProtobufCMessage *m, int depth)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    char *base = (char *)m;

    if (!f->ok)
        return;
    if (depth > PCACHE_MAX_DEPTH) {
        f->ok = false;
        return;
    }
    if (d == &pg_query__a__const__descriptor) {
        visit_const(f, (PgQuery__AConst *)m);
        return;
    }
    if (d == &pg_query__node__descriptor) {
        /* A Node is one of some 250 kinds: go straight to the one set. */
        PgQuery__Node *n = (PgQuery__Node *)m;
        const ProtobufCFieldDescriptor *fd;
        ProtobufCMessage *sub;
        if (n->node_case == PG_QUERY__NODE__NODE__NOT_SET)
            return;
        fd = protobuf_c_message_descriptor_get_field(d, (unsigned)n->node_case);
        if (fd == NULL || fd->type != PROTOBUF_C_TYPE_MESSAGE)
            return;
        sub = *(ProtobufCMessage **)(base + fd->offset);
        if (sub != NULL)
            walk(f, sub, depth + 1);
        return;
    }
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[i];
        if (fd->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t cnt = *(size_t *)(base + fd->quantifier_offset);
            ProtobufCMessage **arr = *(ProtobufCMessage ***)(base + fd->offset);
            for (size_t j = 0; j < cnt; j++)
                if (arr[j] != NULL)
                    walk(f, arr[j], depth + 1);
        } else {
            ProtobufCMessage *sub;
            if ((fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
                *(uint32_t *)(base + fd->quantifier_offset) != fd->id)
                continue;
            sub = *(ProtobufCMessage **)(base + fd->offset);
            if (sub != NULL)
                walk(f, sub, depth + 1);
        }
    }
}

static void walk_tree(find_ctx *f, PgQuery__ParseResult *tree)
{
    for (size_t i = 0; i < tree->n_stmts && f->ok; i++)
        if (tree->stmts[i] != NULL)
            walk(f, &tree->stmts[i]->base, 0);
}

/* ---- entries ------------------------------------------------------------ */

static void entry_free(sql_pcache_entry *e)
{
    if (e == NULL)
        return;
    if (e->tree != NULL) {
        /* Give the tree back the strings it was unpacked with. */
        for (uint32_t i = 0; i < e->nconsts; i++) {
            PgQuery__AConst *c = e->consts[i].c;
            if (e->consts[i].orig == NULL)
                continue;
            if (c->val_case == PG_QUERY__A__CONST__VAL_FVAL)
                c->fval->fval = e->consts[i].orig;
            else
                c->sval->sval = e->consts[i].orig;
        }
        pg_query__parse_result__free_unpacked(e->tree, NULL);
    }
    for (uint16_t i = 0; i < e->nslots; i++)
        free(e->slots[i].buf);
    free(e->slots);
    free(e->consts);
    free(e->key);
    free(e);
}

/*
 * A new entry for the key just lexed, taking tree (parsed from the text
 * just lexed) if each constant is found in it as described above; else
 * an entry saying the key is not cacheable, and the caller keeps tree.
 * NULL when memory ran out.
 */
static sql_pcache_entry *entry_make(struct sql_pcache *pc, uint64_t hash,
                                    size_t key_len, PgQuery__ParseResult *tree)
{
    sql_pcache_entry *e = calloc(1, sizeof(*e));
    uint32_t n = pc->nlits, total = 0;
    uint32_t *count = NULL, *first = NULL, *fill = NULL;
    uint8_t *neg = NULL;
    find_ctx f = {.lits = pc->lits, .nlits = n, .ok = true};

    if (e == NULL || (e->key = malloc(key_len ? key_len : 1)) == NULL)
        goto nomem;
    memcpy(e->key, pc->key, key_len);
    e->key_len = (uint32_t)key_len;
    e->hash = hash;
    count = calloc(n + 1, sizeof(*count));
    first = calloc(n + 1, sizeof(*first));
    fill = calloc(n + 1, sizeof(*fill));
    neg = calloc(n + 1, sizeof(*neg));
    if (count == NULL || first == NULL || fill == NULL || neg == NULL)
        goto nomem;
    f.count = count;
    f.neg = neg;
    walk_tree(&f, tree);
    for (uint32_t k = 0; k < n && f.ok; k++) {
        if (count[k] == 0)
            f.ok = false;
        first[k] = total;
        total += count[k];
    }
    if (f.ok) {
        e->slots = calloc(n ? n : 1, sizeof(*e->slots));
        e->consts = calloc(total ? total : 1, sizeof(*e->consts));
        if (e->slots == NULL || e->consts == NULL)
            goto nomem;
        f.consts = e->consts;
        f.first = first;
        f.fill = fill;
        walk_tree(&f, tree);
        for (uint32_t k = 0; k < n; k++)
            e->slots[k] = (pcache_slot){.orig_start = pc->lits[k].start,
                                        .orig_len = pc->lits[k].len,
                                        .cur_start = pc->lits[k].start,
                                        .cur_len = pc->lits[k].len,
                                        .first = first[k],
                                        .n = count[k],
                                        .cls = pc->lits[k].cls,
                                        .neg = neg[k] == 2};
        e->nslots = (uint16_t)n;
        e->nconsts = total;
        e->tree = tree;
    }
    free(count);
    free(first);
    free(fill);
    free(neg);
    return e;
nomem:
    free(count);
    free(first);
    free(fill);
    free(neg);
    if (e != NULL) {
        free(e->slots);
        free(e->consts);
        free(e->key);
        free(e);
    }
    return NULL;
}

/* Writes the constants of text (just lexed) into e's tree. */
static bool entry_fill(struct sql_pcache *pc, sql_pcache_entry *e,
                       const char *text)
{
    for (uint16_t k = 0; k < e->nslots; k++) {
        pcache_slot *sl = &e->slots[k];
        const pcache_lit *l = &pc->lits[k];
        const char *p = text + l->start;
        sl->cur_start = l->start;
        sl->cur_len = l->len;
        if (sl->cls == 'i') {
            int32_t v = 0;
            for (uint32_t j = 0; j < l->len; j++)
                v = v * 10 + (p[j] - '0');
            if (sl->neg)
                v = -v;
            for (uint32_t j = 0; j < sl->n; j++)
                e->consts[sl->first + j].c->ival->ival = v;
            continue;
        }
        /* A string's value is its text inside the quotes, '' read as '. */
        if (l->len + 2 > sl->cap) {
            size_t cap = l->len + 2 < 32 ? 32 : (size_t)l->len + 2;
            char *b = realloc(sl->buf, cap);
            if (b == NULL)
                return false;
            sl->buf = b;
            sl->cap = cap;
        }
        if (sl->cls == 'f') {
            /* Negated as the grammar does it: a '-' before the digits. */
            size_t o = sl->neg ? 1 : 0;
            sl->buf[0] = '-';
            memcpy(sl->buf + o, p, l->len);
            sl->buf[o + l->len] = '\0';
        } else {
            size_t o = 0;
            for (uint32_t j = 1; j + 1 < l->len; j++) {
                sl->buf[o++] = p[j];
                if (p[j] == '\'')
                    j++;
            }
            sl->buf[o] = '\0';
        }
        for (uint32_t j = 0; j < sl->n; j++) {
            PgQuery__AConst *c = e->consts[sl->first + j].c;
            if (sl->cls == 'f')
                c->fval->fval = sl->buf;
            else
                c->sval->sval = sl->buf;
        }
    }
    return true;
}

/* Puts e in the cache, replacing the least recently used entry not being
 * run when it is full.  False if there is no room. */
static bool cache_add(struct sql_pcache *pc, uint32_t limit, sql_pcache_entry *e)
{
    if (pc->n < limit) {
        if (pc->n == pc->cap) {
            uint32_t cap = pc->cap < 8 ? 8 : pc->cap * 2;
            sql_pcache_entry **a = realloc(pc->entries, cap * sizeof(*a));
            if (a == NULL)
                return false;
            pc->entries = a;
            pc->cap = cap;
        }
        pc->entries[pc->n++] = e;
        return true;
    }
    {
        int64_t victim = -1;
        for (uint32_t i = 0; i < pc->n; i++)
            if (pc->entries[i]->pins == 0 &&
                (victim < 0 || pc->entries[i]->used < pc->entries[victim]->used))
                victim = i;
        if (victim < 0)
            return false;
        entry_free(pc->entries[victim]);
        pc->entries[victim] = e;
    }
    return true;
}

/* ---- the interface ------------------------------------------------------ */

keel_status sql_parse_cached(sql_session *s, const char *text, bool shared,
                             PgQuery__ParseResult **out,
                             sql_pcache_entry **pin)
{
    struct sql_pcache *pc = s->pcache;
    uint32_t limit = s->pcache_limit;
    size_t key_len = 0;
    uint64_t hash;
    sql_pcache_entry *e = NULL;
    keel_status rc;

    *out = NULL;
    *pin = NULL;
    s->locmap_on = false;
    if (limit == 0)
        return sql_parse_raw(s, text, out);
    if (pc == NULL) {
        pc = s->pcache = calloc(1, sizeof(*pc));
        if (pc == NULL)
            return sql_parse_raw(s, text, out);
    }
    if (!lex_key(pc, text, &key_len)) {
        pc->uncacheable++;
        return sql_parse_raw(s, text, out);
    }
    /* A tree kept by a prepared statement is never rewritten, so only a
     * text without constants may share one. */
    if (shared && pc->nlits > 0)
        return sql_parse_raw(s, text, out);
    hash = XXH3_64bits(pc->key, key_len);
    pc->clock++;
    for (uint32_t i = 0; i < pc->n; i++) {
        sql_pcache_entry *x = pc->entries[i];
        if (x->hash == hash && x->key_len == key_len &&
            memcmp(x->key, pc->key, key_len) == 0) {
            e = x;
            break;
        }
    }
    if (e != NULL && (e->pins == 0 || e->nslots == 0)) {
        e->used = pc->clock;
        if (e->tree == NULL) {
            pc->uncacheable++;
            return sql_parse_raw(s, text, out);
        }
        if (!entry_fill(pc, e, text))
            return sql_parse_raw(s, text, out);
        pc->hits++;
        e->pins++;
        *pin = e;
        *out = e->tree;
        s->locmap = e;
        s->locmap_on = e->nslots > 0;
        return KEEL_OK;
    }
    rc = sql_parse_raw(s, text, out);
    if (rc != KEEL_OK || e != NULL)
        return rc;
    pc->misses++;
    e = entry_make(pc, hash, key_len, *out);
    if (e == NULL)
        return KEEL_OK;
    e->used = pc->clock;
    if (!cache_add(pc, limit, e)) {
        e->tree = NULL; /* the caller frees it */
        entry_free(e);
        return KEEL_OK;
    }
    if (e->tree != NULL) {
        e->pins++;
        *pin = e;
    }
    return KEEL_OK;
}

void sql_parse_done(sql_session *s, PgQuery__ParseResult *tree,
                    sql_pcache_entry *pin)
{
    s->locmap_on = false;
    if (pin != NULL) {
        pin->pins--;
        /* A SET of the cache's size may have had to leave it in. */
        if (s->pcache->n > s->pcache_limit)
            sql_parse_cache_resize(s, s->pcache_limit);
    } else if (tree != NULL) {
        pg_query__parse_result__free_unpacked(tree, NULL);
    }
}

int32_t sql_parse_location(const sql_session *s, int32_t location)
{
    const sql_pcache_entry *e = s->locmap;
    const pcache_slot *sl = NULL;
    int32_t off;

    if (!s->locmap_on || location < 0 || e == NULL)
        return location;
    for (uint16_t i = 0;
         i < e->nslots && (int32_t)e->slots[i].orig_start <= location; i++)
        sl = &e->slots[i];
    if (sl == NULL)
        return location;
    off = location - (int32_t)sl->orig_start;
    if (off < (int32_t)sl->orig_len)
        return (int32_t)sl->cur_start +
               (off < (int32_t)sl->cur_len ? off : (int32_t)sl->cur_len - 1);
    return (int32_t)(sl->cur_start + sl->cur_len) + (off - (int32_t)sl->orig_len);
}

void sql_parse_cache_free(sql_session *s)
{
    struct sql_pcache *pc = s->pcache;

    if (pc == NULL)
        return;
    for (uint32_t i = 0; i < pc->n; i++)
        entry_free(pc->entries[i]);
    free(pc->entries);
    free(pc->key);
    free(pc->lits);
    free(pc);
    s->pcache = NULL;
    s->locmap = NULL;
}

void sql_parse_cache_resize(sql_session *s, uint32_t limit)
{
    struct sql_pcache *pc = s->pcache;

    s->pcache_limit = limit;
    if (pc == NULL)
        return;
    /* Drop entries past the new limit, the least recently used first. */
    while (pc->n > limit) {
        int64_t victim = -1;
        for (uint32_t i = 0; i < pc->n; i++)
            if (pc->entries[i]->pins == 0 &&
                (victim < 0 || pc->entries[i]->used < pc->entries[victim]->used))
                victim = i;
        if (victim < 0)
            break;
        entry_free(pc->entries[victim]);
        pc->entries[victim] = pc->entries[--pc->n];
    }
}

void sql_parse_cache_stats(const sql_session *s, sql_parse_stats *out)
{
    const struct sql_pcache *pc = s->pcache;

    memset(out, 0, sizeof(*out));
    if (pc == NULL)
        return;
    out->entries = pc->n;
    out->hits = pc->hits;
    out->misses = pc->misses;
    out->uncacheable = pc->uncacheable;
}
