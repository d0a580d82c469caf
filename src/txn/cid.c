/*
 * cid.c: a transaction's command ids and its table of combo ids (cid.h).
 *
 * The table is an array of pairs indexed by combo id, and an open-addressed
 * hash of them (linear probing) so that deleting many versions inserted in
 * one command and deleted in another finds their one pair at once.
 */
#include "txn/cid.h"

#include <stdlib.h>
#include <string.h>

/* Pairs a reset keeps the memory of; a transaction that made more gives
 * it back. */
#define CID_KEEP_PAIRS 1024

void cid_state_init(cid_state *c)
{
    memset(c, 0, sizeof(*c));
    c->reading = CID_ALL;
}

void cid_state_reset(cid_state *c)
{
    c->current = CID_FIRST;
    c->used = false;
    c->reading = CID_ALL;
    if (c->npairs == 0)
        return;
    if (c->cap > CID_KEEP_PAIRS) {
        cid_state_free(c);
        return;
    }
    memset(c->slots, 0, (size_t)c->nslots * sizeof(*c->slots));
    c->npairs = 0;
}

void cid_state_free(cid_state *c)
{
    free(c->pairs);
    free(c->slots);
    cid_state_init(c);
}

int cid_next(cid_state *c, kerr *err)
{
    if (!c->used)
        return KEEL_OK;
    if (c->current >= CID_LAST)
        return kerr_set(err, KEEL_EEXHAUSTED,
                        "a transaction cannot have more than %u commands",
                        (unsigned)CID_LAST + 1);
    c->current++;
    c->used = false;
    return KEEL_OK;
}

static inline uint32_t pair_hash(cid_t cmin, cid_t cmax)
{
    uint64_t x = ((uint64_t)cmin << 32 | cmax) * UINT64_C(0x9E3779B97F4A7C15);

    return (uint32_t)(x >> 32);
}

/* Doubles the table (ENOMEM leaves it as it was). */
static int grow(cid_state *c, kerr *err)
{
    uint32_t cap = c->cap == 0 ? 16 : c->cap * 2;
    uint32_t nslots = cap * 2, mask = nslots - 1;
    cid_pair *pairs;
    uint32_t *slots;

    if (c->cap >= CID_COMBO_MAX)
        return kerr_set(err, KEEL_EEXHAUSTED,
                        "a transaction cannot have more than %u combo "
                        "command ids",
                        (unsigned)CID_COMBO_MAX);
    pairs = realloc(c->pairs, (size_t)cap * sizeof(*pairs));
    if (pairs == NULL)
        return kerr_set(err, KEEL_ENOMEM,
                        "out of memory for combo command ids");
    c->pairs = pairs;
    slots = calloc(nslots, sizeof(*slots));
    if (slots == NULL)
        return kerr_set(err, KEEL_ENOMEM,
                        "out of memory for combo command ids");
    for (uint32_t i = 0; i < c->npairs; i++) {
        uint32_t h = pair_hash(pairs[i].cmin, pairs[i].cmax) & mask;
        while (slots[h] != 0)
            h = (h + 1) & mask;
        slots[h] = i + 1;
    }
    free(c->slots);
    c->slots = slots;
    c->nslots = nslots;
    c->cap = cap;
    return KEEL_OK;
}

int cid_combo(cid_state *c, cid_t cmin, cid_t cmax, uint32_t *combo, kerr *err)
{
    uint32_t h;
    int rc;

    if (c->nslots > 0) {
        h = pair_hash(cmin, cmax) & (c->nslots - 1);
        for (; c->slots[h] != 0; h = (h + 1) & (c->nslots - 1)) {
            const cid_pair *p = &c->pairs[c->slots[h] - 1];
            if (p->cmin == cmin && p->cmax == cmax) {
                *combo = c->slots[h] - 1;
                return KEEL_OK;
            }
        }
    }
    if (c->npairs == c->cap) {
        rc = grow(c, err);
        if (rc != KEEL_OK)
            return rc;
    }
    h = pair_hash(cmin, cmax) & (c->nslots - 1);
    while (c->slots[h] != 0)
        h = (h + 1) & (c->nslots - 1);
    c->pairs[c->npairs] = (cid_pair){cmin, cmax};
    c->slots[h] = ++c->npairs;
    *combo = c->npairs - 1;
    return KEEL_OK;
}
