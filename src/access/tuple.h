/*
 * tuple.h: rows as bytes.
 *
 * A tuple descriptor lists a row's columns (type, width, not-null).  The
 * same encoding stores heap rows and B-tree keys: after whatever header the
 * access method puts first, a tuple's data area (which starts 8-byte
 * aligned) holds
 *
 *   [null bitmap, ceil(natts / 8) bytes, bit i set = column i is null,
 *    present only when some column is null]
 *   each non-null column in order, aligned to its alignment relative to the
 *   start of the data area:
 *     int2 2, int4 4, int8 8, oid 4, bool 1, float8 8 (all native order);
 *     name: 64 bytes, NUL-padded; char(n): n bytes, blank-padded;
 *     text: a 4-byte-aligned uint32 length, then the bytes;
 *     numeric: an unaligned uint16 length, then the bytes of its stored
 *     form (keel.h's KEEL_NUMERIC), so a money-like value takes 9 to 13;
 *     uuid: 16 bytes, unaligned; bytea, json and jsonb: as text.
 *
 * Values handed out by tuple_deform() point into the tuple's bytes.
 */
#ifndef KEEL_ACCESS_TUPLE_H
#define KEEL_ACCESS_TUPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "keel/keel.h"
#include "port/error.h"

/* Longest char(n). */
#define TUPLE_MAX_CHAR_LEN 4096

/* Whether values of type point at bytes (keel_value's v.s): name, char,
 * text, numeric, uuid, bytea. */
static inline bool type_has_bytes(keel_type type)
{
    return type == KEEL_NAME || type == KEEL_CHAR || type == KEEL_TEXT ||
           type == KEEL_NUMERIC || type == KEEL_UUID || type == KEEL_BYTEA ||
           type == KEEL_JSON || type == KEEL_JSONB;
}

/* Whether a column of type has a variable length (a length word, then
 * its bytes): text, numeric, bytea, json and jsonb. */
static inline bool type_is_varlen(keel_type type)
{
    return type == KEEL_TEXT || type == KEEL_NUMERIC || type == KEEL_BYTEA ||
           type == KEEL_JSON || type == KEEL_JSONB;
}

typedef struct tuple_attr {
    keel_type type;
    uint16_t len;  /* bytes of a fixed-width value; 0 for text, numeric */
    uint8_t align; /* 1, 2, 4 or 8 */
    bool notnull;
    /* The value's offset in a tuple without nulls, when every column
     * before it has a fixed width; -1 otherwise (kept by tupdesc_set()). */
    int16_t fixed_off;
} tuple_attr;

typedef struct tuple_desc {
    uint16_t natts;
    /* How many leading columns are 4-byte integers (int4, oid) at known
     * offsets (kept by tupdesc_set()): a prefix of them deforms without
     * looking at types. */
    uint16_t int4_prefix;
    tuple_attr attrs[];
} tuple_desc;

/* A descriptor of natts columns, each to be set with tupdesc_set().  NULL
 * if memory is exhausted. */
tuple_desc *tupdesc_alloc(uint16_t natts);
void tupdesc_free(tuple_desc *d);

/* A copy of d (NULL if memory is exhausted). */
tuple_desc *tupdesc_copy(const tuple_desc *d);

/* The bytes of d, which are all of it: a copy of them is a descriptor. */
static inline size_t tupdesc_size(const tuple_desc *d)
{
    return sizeof(tuple_desc) + sizeof(tuple_attr) * d->natts;
}

/*
 * Sets column i: its type, for char its length n (1..TUPLE_MAX_CHAR_LEN,
 * ignored otherwise), and whether it may be null.  EINVAL for an unknown
 * type or a bad length, leaving the descriptor as it was.
 */
int tupdesc_set(tuple_desc *d, uint16_t i, keel_type type, uint16_t charlen,
                bool notnull, kerr *err);

/* The name of a type ("int4", "char", ...), for messages. */
const char *type_name(keel_type type);

/* A numeric value's stored form (keel.h) as decimal text at buf (cap
 * bytes, NUL-terminated, cut short if it does not fit), for messages. */
void value_numeric_text(const keel_value *v, char *buf, size_t cap);
/* A uuid (8-4-4-4-12 hex digits) or bytea (\x and two hex digits a byte)
 * value as PostgreSQL prints it, cut to cap - 1 bytes. */
void value_bytes_text(keel_type type, const keel_value *v, char *buf,
                      size_t cap);

/*
 * Computes the size of the data area for vals (d->natts values) and whether
 * it needs a null bitmap.  Checks each value against its column: ETYPE for
 * a null in a not-null column, ETOOBIG for a name over 63 bytes or a char
 * value longer than its column (the message names the column number).
 */
int tuple_size(const tuple_desc *d, const keel_value *vals, size_t *size,
               bool *has_nulls, kerr *err);

/* Writes the data area for vals at data (8-byte aligned, tuple_size()
 * bytes, zeroed by the caller or not: padding is written as zero). */
void tuple_fill(const tuple_desc *d, const keel_value *vals, bool has_nulls,
                void *data);

/* Reads every column of the data area at data into vals. */
void tuple_deform(const tuple_desc *d, const void *data, bool has_nulls,
                  keel_value *vals);

/*
 * True if the data area at data (len bytes available) is a well-formed
 * encoding for d: every column, and every text length, within len, and no
 * not-null column null.  A row without nulls whose columns all have fixed
 * widths costs one compare.  What tuple_deform(), which reads without
 * bounds, needs of data it did not make.
 */
bool tuple_valid(const tuple_desc *d, const void *data, size_t len,
                 bool has_nulls);

/* The bytes of a tuple of d without nulls if every column has a fixed
 * width (tuple_valid() of one such is then a compare with this), else 0. */
size_t tuple_fixed_size(const tuple_desc *d);

/* What is wrong with a data area that tuple_valid() refuses. */
typedef enum tuple_fault {
    TUPLE_FAULT_NONE = 0, /* nothing: the data area is well-formed */
    TUPLE_FAULT_BITMAP,   /* the null bitmap runs past the end */
    TUPLE_FAULT_NULL,     /* a not-null column is null */
    TUPLE_FAULT_OVERRUN,  /* a value, or a text's length word or bytes, runs
                             past the end */
} tuple_fault;

/*
 * tuple_valid() that says what is wrong, for messages: TUPLE_FAULT_NONE
 * exactly when tuple_valid() is true, else the first fault met walking
 * the columns in order, and in *col the (0-based) column it concerns (0
 * for TUPLE_FAULT_BITMAP).  It walks every column, where tuple_valid()
 * compares one length for a row of fixed widths without nulls.
 */
tuple_fault tuple_fault_of(const tuple_desc *d, const void *data, size_t len,
                           bool has_nulls, uint16_t *col);

/*
 * Reads the first ncols columns (at most d->natts) of the data area at
 * data, which has len bytes, into vals[0..ncols); the rest are not read.
 * Returns false if a value (or a text's length word) would run past len,
 * or the null bitmap has a not-null column null: the data does not suit
 * d, and vals are partly filled.
 */
bool tuple_deform_prefix(const tuple_desc *d, const void *data, size_t len,
                         bool has_nulls, uint16_t ncols, keel_value *vals);

/*
 * The size of the data area of every row of d that has no nulls, if that
 * size is the same for all of them (no text column), else 0.
 */
size_t tupdesc_fixed_size(const tuple_desc *d);

/*
 * Compares two non-null or null values of column a: negative, zero or
 * positive as x sorts before, equal to or after y.  Nulls sort after every
 * value; float8 NaN after every number.  Strings compare bytewise, a
 * shorter prefix first (name up to its NUL, char without trailing blanks,
 * text by its bytes).
 */
int value_compare(const tuple_attr *a, const keel_value *x,
                  const keel_value *y);

#endif /* KEEL_ACCESS_TUPLE_H */
