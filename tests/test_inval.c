/*
 * test_inval.c: the shared invalidation queue: delivery in order to every
 * reader, transaction lists deduplicated and discarded, readers that fall
 * behind told to reset, and oversized transactions turned into a reset.
 */
#include "testutil.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "catalog/inval.h"

static void test_delivery(void **state)
{
    inval_queue *q;
    inval_reader a, b;
    inval_pending p = {0};
    inval_msg out[8];
    uint32_t n;
    kerr err;

    (void)state;
    assert_int_equal(inval_queue_create(0, &q, &err), KEEL_EINVAL);
    assert_int_equal(inval_queue_create(8, &q, &err), KEEL_OK);
    inval_reader_init(q, &a);
    assert_false(inval_has_news(q, &a));
    inval_pending_add(&p, 1, 100);
    inval_pending_add(&p, 2, 200);
    inval_pending_add(&p, 1, 100); /* duplicate: kept once */
    assert_int_equal(p.count, 2);
    inval_queue_append(q, &p);
    assert_int_equal(p.count, 0);
    inval_reader_init(q, &b); /* a later reader sees only later messages */
    assert_true(inval_has_news(q, &a));
    assert_false(inval_has_news(q, &b));
    assert_int_equal(inval_read(q, &a, out, 8, &n), INVAL_MESSAGES);
    assert_int_equal(n, 2);
    assert_int_equal(out[0].cache_id, 1);
    assert_int_equal(out[0].hash, 100);
    assert_int_equal(out[1].cache_id, 2);
    assert_int_equal(out[1].hash, 200);
    assert_int_equal(inval_read(q, &a, out, 8, &n), INVAL_MESSAGES);
    assert_int_equal(n, 0);
    assert_int_equal(inval_read(q, &b, out, 8, &n), INVAL_MESSAGES);
    assert_int_equal(n, 0);

    /* An aborted transaction's list is discarded: nothing is appended. */
    inval_pending_add(&p, 3, 300);
    inval_pending_clear(&p);
    inval_queue_append(q, &p);
    assert_false(inval_has_news(q, &a));

    /* Reading in pieces keeps order. */
    for (uint32_t i = 0; i < 5; i++)
        inval_queue_append_one(q, 7, i);
    assert_int_equal(inval_read(q, &a, out, 2, &n), INVAL_MESSAGES);
    assert_int_equal(n, 2);
    assert_int_equal(out[1].hash, 1);
    assert_int_equal(inval_read(q, &a, out, 8, &n), INVAL_MESSAGES);
    assert_int_equal(n, 3);
    assert_int_equal(out[2].hash, 4);
    inval_pending_free(&p);
    inval_queue_destroy(q);
}

static void test_overflow(void **state)
{
    inval_queue *q;
    inval_reader slow, fast;
    inval_pending p = {0};
    inval_msg out[8];
    uint32_t n;
    kerr err;

    (void)state;
    assert_int_equal(inval_queue_create(4, &q, &err), KEEL_OK);
    inval_reader_init(q, &slow);
    inval_reader_init(q, &fast);
    for (uint32_t i = 0; i < 4; i++)
        inval_queue_append_one(q, 1, i);
    /* Exactly full: still readable. */
    assert_int_equal(inval_read(q, &fast, out, 8, &n), INVAL_MESSAGES);
    assert_int_equal(n, 4);
    inval_queue_append_one(q, 1, 4);
    /* slow is 5 behind a ring of 4: it lost one and must reset. */
    assert_int_equal(inval_read(q, &slow, out, 8, &n), INVAL_RESET);
    assert_int_equal(n, 0);
    assert_false(inval_has_news(q, &slow));
    assert_int_equal(inval_read(q, &fast, out, 8, &n), INVAL_MESSAGES);
    assert_int_equal(n, 1);
    assert_int_equal(out[0].hash, 4);

    /* A transaction larger than the ring appends one reset message. */
    for (uint32_t i = 0; i < 6; i++)
        inval_pending_add(&p, 2, i);
    inval_queue_append(q, &p);
    assert_int_equal(inval_read(q, &fast, out, 8, &n), INVAL_MESSAGES);
    assert_int_equal(n, 1);
    assert_int_equal(out[0].cache_id, INVAL_RESET_ALL);
    inval_pending_free(&p);
    inval_queue_destroy(q);
}

/* A reader that waits for announced commits, then notes the queue head. */
typedef struct waiter {
    inval_queue *q;
    atomic_int started;
    atomic_int returned;
    uint64_t head_seen;
} waiter;

static void *waiter_main(void *arg)
{
    waiter *w = arg;

    atomic_store(&w->started, 1);
    inval_wait_commits(w->q);
    w->head_seen = inval_queue_head(w->q);
    atomic_store(&w->returned, 1);
    return NULL;
}

/*
 * A reader that starts after a commit was announced does not get past
 * inval_wait_commits() until the committed messages are in the queue; an
 * aborted bracket appends nothing; empty lists do not announce.
 */
static void test_commit_bracket(void **state)
{
    inval_queue *q;
    inval_pending p = {0}, empty = {0};
    waiter w = {0};
    pthread_t t;
    kerr err;

    (void)state;
    assert_int_equal(inval_queue_create(8, &q, &err), KEEL_OK);
    w.q = q;

    /* Nothing announced: no wait. */
    inval_commit_begin(q, &empty);
    inval_wait_commits(q);
    inval_commit_end(q, &empty, true);
    assert_int_equal(inval_queue_head(q), 0);

    inval_pending_add(&p, 3, 30);
    inval_pending_add(&p, 4, 40);
    inval_commit_begin(q, &p);
    assert_int_equal(pthread_create(&t, NULL, waiter_main, &w), 0);
    while (!atomic_load(&w.started))
        sched_yield();
    /* However long we look, the reader stays in the wait. */
    for (int i = 0; i < 2000; i++) {
        assert_int_equal(atomic_load(&w.returned), 0);
        sched_yield();
    }
    inval_commit_end(q, &p, true);
    pthread_join(t, NULL);
    assert_int_equal(w.head_seen, 2);
    assert_int_equal(p.count, 0);

    /* An aborted bracket clears the list and appends nothing. */
    inval_pending_add(&p, 5, 50);
    inval_commit_begin(q, &p);
    inval_commit_end(q, &p, false);
    assert_int_equal(p.count, 0);
    assert_int_equal(inval_queue_head(q), 2);
    inval_wait_commits(q); /* nothing left announced */

    inval_pending_free(&p);
    inval_queue_destroy(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delivery),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_commit_bracket),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
