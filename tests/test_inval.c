/*
 * test_inval.c: the shared invalidation queue: delivery in order to every
 * reader, transaction lists deduplicated and discarded, readers that fall
 * behind told to reset, and oversized transactions turned into a reset.
 */
#include "testutil.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delivery),
        cmocka_unit_test(test_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
