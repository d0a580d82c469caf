/*
 * check.h: verifying a database, for `keel check` and its tests.
 */
#ifndef KEEL_TOOLS_CHECK_H
#define KEEL_TOOLS_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "keel/keel.h"

/* Receives one problem, or (note true) one note, as a line (no newline)
 * naming the relation, and the file and block concerned where there is
 * one. */
typedef void (*check_problem_fn)(void *ctx, bool note, const char *line);

/*
 * Checks the database in dir, which no one else may be using (its lock
 * sees to that): opens it (a damaged control file or catalog is a
 * problem), then verifies
 *   - that every relation keel_class lists has its schema in
 *     keel_namespace, and an index its table in keel_class;
 *   - every block of every relation file (the commit log, the catalogs,
 *     every table and index keel_class lists): checksum and page header,
 *     and that every file keel_class names exists;
 *   - every heap page's structure (heappage_verify());
 *   - every tuple of every table, the catalogs' included: that it decodes
 *     as a row of its table (heap_row_decode(): as many columns as the
 *     row type, no value past the tuple's end, no not-null column null),
 *     and that neither its inserting nor its deleting transaction id is
 *     at or past the control file's transaction id limit;
 *   - that no keel_namespace, keel_class or keel_index row gives an
 *     object an id (a schema's, a relation's or its file's number, an
 *     index's) at or past the control file's object id limit: ids from
 *     either limit on would be handed out again;
 *   - every commit-log status (clog_page_verify());
 *   - every B-tree (btree_check());
 *   - that each table and its indexes agree: every index entry points to a
 *     heap tuple, and every heap tuple is indexed exactly once by each
 *     index (a tuple deleted by its own inserter at most once: a failed
 *     insert removes its entries again), and every entry a unique check
 *     marked dead points to a tuple whose inserter aborted or whose deleter
 *     committed.  A tuple that does not decode is reported once, as such:
 *     the entries pointing to it are not judged.
 * A keel_namespace, keel_class or keel_index row that does not decode is
 * left out of the list of relations (and a note says how many were), so
 * that the rest is still checked.
 * Each problem goes to fn; *problems gets their number.  Notes, what is
 * not damage itself but may be its sign, go to fn too, and their number
 * to *notes (unless notes is NULL): each file in dir named as a
 * relation's (its number) that no relation keel_class shows owns.  A
 * crash leaves such files, of a create that did not commit or a drop that
 * did (keel never removes a file the catalogs do not account for), but
 * damage to keel_class or the commit log can hide a live relation too.
 * Returns KEEL_OK
 * when the check ran (whatever it found), or the error that kept it from
 * running, with the message in err: KEEL_ENOENT (not a database),
 * KEEL_EBUSY (open elsewhere), KEEL_ENOMEM, I/O errors.  A control file or
 * catalog too damaged to open is a problem found.  Closes the database
 * cleanly.
 */
int check_database(const char *dir, check_problem_fn fn, void *ctx,
                   uint64_t *problems, uint64_t *notes, keel_error *err);

#endif /* KEEL_TOOLS_CHECK_H */
