/*
 * waldump.c: `keel wal DIR [--stats] [--start LSN] [--limit N]`: the
 * write-ahead log of a database, record by record as pg_waldump prints
 * it (LSN, length, type, what it did, transaction, blocks), or with
 * --stats the totals per kind: records, bytes, whole page images.  Reads
 * from the last checkpoint's redo pointer (the control file) unless
 * --start says where, and ends at the end of the valid log, saying why.
 * It only reads, and works while the database is open.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/control.h"
#include "port/clock.h"
#include "storage/buf_log.h"
#include "tools/tools.h"
#include "wal/wal.h"

typedef struct dump_totals {
    uint64_t records, bytes, images, image_bytes;
} dump_totals;

typedef struct block_walk {
    char *out;
    size_t len, used;
    uint64_t images, image_bytes;
} block_walk;

static void on_block(void *arg, const buf_log_block *b, uint32_t data_len)
{
    block_walk *w = arg;
    int n;

    if (b->flags & BUF_LOG_FULL) {
        w->images++;
        w->image_bytes += data_len;
    }
    if (w->out == NULL || w->used >= w->len)
        return;
    n = snprintf(w->out + w->used, w->len - w->used, " rel %u blk %u%s(%u)",
                 b->rel, b->blk,
                 (b->flags & BUF_LOG_ZERO)   ? " zero"
                 : (b->flags & BUF_LOG_FULL) ? " image"
                                             : " ranges",
                 data_len);
    if (n > 0)
        w->used += (size_t)n;
}

int tool_wal_main(int argc, char **argv)
{
    const char *dir = NULL;
    bool stats = false;
    uint64_t start = 0, limit = UINT64_MAX, t0;
    dump_totals by_info[WAL_INFO_COUNT + 1], by_type[WAL_TYPE_COUNT], all;
    control_data c;
    wal_reader *r;
    const wal_record *h;
    const char *body;
    kerr e;
    int rc;

    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--stats") == 0)
            stats = true;
        else if ((strcmp(argv[i], "--start") == 0 ||
                  strcmp(argv[i], "--limit") == 0) &&
                 i + 1 < argc) {
            char *end;
            unsigned long long v;
            errno = 0;
            v = strtoull(argv[i + 1], &end, 0);
            if (errno != 0 || end == argv[i + 1] || *end != '\0' ||
                argv[i + 1][0] == '-') {
                fprintf(stderr, "keel wal: %s needs a number, not '%s'\n",
                        argv[i], argv[i + 1]);
                return 2;
            }
            if (argv[i][2] == 's')
                start = v;
            else
                limit = v;
            i++;
        } else if (dir == NULL && argv[i][0] != '-')
            dir = argv[i];
        else {
            fprintf(stderr, "keel wal: unknown or incomplete option '%s'\n"
                            "usage: keel wal DIR [--stats] [--start LSN] "
                            "[--limit N]\n",
                    argv[i]);
            return 2;
        }
    }
    if (dir == NULL) {
        fprintf(stderr, "usage: keel wal DIR [--stats] [--start LSN] "
                        "[--limit N]\n");
        return 2;
    }
    kerr_clear(&e);
    rc = control_read(dir, &c, &e);
    if (rc != KEEL_OK) {
        fprintf(stderr, "keel wal: %s\n", e.msg);
        return 1;
    }
    if (start == 0)
        start = c.redo_lsn;
    rc = wal_reader_open(dir, start, &r, &e);
    if (rc != KEEL_OK) {
        fprintf(stderr, "keel wal: %s\n", e.msg);
        return 1;
    }
    memset(by_info, 0, sizeof(by_info));
    memset(by_type, 0, sizeof(by_type));
    memset(&all, 0, sizeof(all));
    t0 = clock_now_ns();
    while (all.records < limit &&
           (rc = wal_reader_next(r, &h, &body, &e)) == KEEL_OK) {
        char blocks[512] = "";
        block_walk w = {stats ? NULL : blocks, sizeof(blocks), 0, 0, 0};
        uint64_t len = wal_align(h->len);
        dump_totals *ti, *tt = &by_type[h->type];

        if (h->type == WAL_PAGES)
            (void)buf_log_blocks(h, body, on_block, &w, &e);
        ti = (h->type == WAL_PAGES || h->type == WAL_XACT_END) &&
                     h->info < WAL_INFO_COUNT
                 ? &by_info[h->info]
                 : &by_info[WAL_INFO_COUNT];
        dump_totals *ts[3] = {ti, tt, &all};
        for (int k = 0; k < 3; k++) {
            ts[k]->records++;
            ts[k]->bytes += len;
            ts[k]->images += w.images;
            ts[k]->image_bytes += w.image_bytes;
        }
        if (!stats) {
            printf("lsn %" PRIu64 " len %5u %-11s %-13s xid %-8u%s",
                   h->lsn, h->len, wal_type_name(h->type),
                   h->type == WAL_PAGES || h->type == WAL_XACT_END
                       ? wal_info_name(h->info)
                       : "",
                   h->xid, blocks);
            if (h->type == WAL_CHECKPOINT &&
                h->body_len >= sizeof(wal_checkpoint_body)) {
                wal_checkpoint_body cb;
                memcpy(&cb, body, sizeof(cb));
                printf(" redo %" PRIu64 " next_xid %u next_oid %u", cb.redo,
                       cb.next_xid, cb.next_oid);
            }
            if (h->type == WAL_FILE_CREATE &&
                h->body_len >= sizeof(wal_file_body)) {
                wal_file_body fb;
                memcpy(&fb, body, sizeof(fb));
                printf(" rel %u", fb.relnumber);
            }
            printf("\n");
        }
    }
    t0 = clock_now_ns() - t0;
    if (stats) {
        printf("%-14s %10s %12s %8s %12s\n", "kind", "records", "bytes",
               "images", "image bytes");
        for (int i = 0; i <= WAL_INFO_COUNT; i++)
            if (by_info[i].records > 0)
                printf("%-14s %10" PRIu64 " %12" PRIu64 " %8" PRIu64
                       " %12" PRIu64 "\n",
                       i < WAL_INFO_COUNT ? wal_info_name((uint8_t)i)
                                          : "(other types)",
                       by_info[i].records, by_info[i].bytes, by_info[i].images,
                       by_info[i].image_bytes);
        for (int i = 0; i < WAL_TYPE_COUNT; i++)
            if (by_type[i].records > 0)
                printf("type %-9s %10" PRIu64 " %12" PRIu64 "\n",
                       wal_type_name((uint8_t)i), by_type[i].records,
                       by_type[i].bytes);
        printf("%-14s %10" PRIu64 " %12" PRIu64 " %8" PRIu64 " %12" PRIu64
               "\n",
               "total", all.records, all.bytes, all.images, all.image_bytes);
    }
    printf("read %" PRIu64 " records (%" PRIu64 " bytes) from LSN %" PRIu64
           " to %" PRIu64 " in %.3f s (%.0f records/s)\n",
           all.records, all.bytes, start, wal_reader_end(r), (double)t0 / 1e9,
           t0 > 0 ? (double)all.records * 1e9 / (double)t0 : 0.0);
    wal_reader_close(r);
    if (rc == KEEL_EEOF || rc == KEEL_OK)
        return 0;
    fprintf(stderr, "keel wal: %s\n", e.msg);
    return 1;
}
