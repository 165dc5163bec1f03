/*-------------------------------------------------------------------------
 *
 * int_overflow_catalog.h
 *	  What the catalog walk behind storagelab.int_overflow collects
 *	  (src/int_overflow_catalog.c) and the measurement step reads and fills
 *	  (src/int_overflow_measure.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef STORAGELAB_INT_OVERFLOW_CATALOG_H
#define STORAGELAB_INT_OVERFLOW_CATALOG_H

#include "catalog/pg_type_d.h"
#include "nodes/pg_list.h"

#include "int_overflow.h"

/* A column of a relation. */
typedef struct IoKey
{
	Oid			relid;
	int32		attnum;			/* int32, so that the key has no padding */
} IoKey;

/* Kinds of measurement, in the order of preference among equals. */
typedef enum IoSource
{
	IO_SEQUENCE = 1,
	IO_IDENTITY = 1,			/* same priority as a sequence */
	IO_INDEX = 2,
	IO_STATISTICS = 3,
	IO_FOREIGN_KEY = 4
} IoSource;

/* A table or partitioned table whose integer columns are reported. */
typedef struct IoRel
{
	Oid			relid;			/* hash key */
	char		relkind;
	NameData   *nspname;		/* points into the IoNsp entry */
	const char *relname;		/* in the walk's name storage */
	SlClass		cls;			/* its pg_class row, for the probes */
	struct IoCol *cols;			/* its integer columns, chained by next_in_rel */
} IoRel;

/* A sequence: pg_sequence's parameters, and its state once read. */
typedef struct IoSeq
{
	Oid			seqid;			/* hash key */
	int64		start;
	int64		increment;
	int64		max;
	int64		min;
	bool		cycle;
	bool		has_class;		/* cls is its pg_class row */
	SlClass		cls;
	bool		read;			/* state below is valid */
	const char *status;
	int64		last_value;
	bool		is_called;
} IoSeq;

struct IoRow;

/* An integer column of an IoRel. */
typedef struct IoCol
{
	IoKey		key;
	IoRel	   *rel;
	Oid			atttypid;
	Oid			basetype;		/* int2, int4 or int8 */
	const char *attname;		/* in the walk's name storage */
	struct IoRow *row;			/* its row, when it is reported */
	Acl		   *attacl;			/* its column privileges, NULL if none */
	SlIndex    *index;			/* btree index leading with it, if any */
	struct IoCol *next_leaf;	/* the next leaf column of its row */
	struct IoCol *next_in_rel;	/* the next integer column of rel */
	bool		inherited;		/* attinhcount > 0 */
	bool		index_unique;
	int16		index_natts;
} IoCol;

/* A sequence feeding a row, and how (sequence or identity). */
typedef struct IoRowSeq
{
	IoSeq	   *seq;
	bool		identity;
	struct IoRowSeq *next;		/* the row's next one */
} IoRowSeq;

/* One measurement of a row (a sequence, index ends, statistics). */
typedef struct IoMeas
{
	IoSource	source;
	bool		foreign_key;	/* borrowed from a referenced key */
	IoSeq	   *seq;			/* sequence measurements */
	bool		identity;
	bool		has_values;		/* min_value/max_value valid (value sources) */
	int64		min_value;
	int64		max_value;
	bool		exact;
	const char *status;
} IoMeas;

/* A foreign-key column pair, between rows. */
typedef struct IoFkPair
{
	struct IoRow *row;			/* the referencing column's row */
	struct IoRow *ref;			/* the referenced column's row */
	Oid			basetype;
	Oid			ref_basetype;
} IoFkPair;

/*
 * A reported column (the own column of a table, or a tree's root column).
 * Rows are allocated side by side in the walk's storage (no hash table, no
 * allocation header each): 88 bytes per row.
 */
typedef struct IoRow
{
	IoKey		key;
	IoCol	   *col;
	IoCol	   *leaves;			/* columns of its leaf tables (relkind r),
								 * chained by next_leaf: no list per row */
	IoRowSeq   *seqs;			/* chained by next */
	List	   *narrow_refs;	/* IoRow: wider keys this column references */
	List	   *referenced_by;	/* IoFkPair where this row is the key */
	List	   *own;			/* IoMeas of its own */
	/*
	 * The bounds of its pg_statistic row: the whole tree's for a parent
	 * (partitioned, or with inheritance children) when there is one, else
	 * the table's own, as pg_stats shows them first.
	 */
	int64		stats_min;
	int64		stats_max;
	bool		stats_tuple;	/* such a row exists */
	bool		stats_inherited;	/* and it is the tree's */
	bool		stats_found;	/* and has integer bounds */
	bool		narrow_ref;		/* a narrower FK column references it */
	bool		leaf_unreadable;	/* an index probe said unreadable */
	bool		stats_unreadable;
	bool		visited;		/* scratch flag of referencing_columns() */
} IoRow;

/* The range of a row's integer type. */
static inline int64
io_type_min(const IoRow *row)
{
	return row->col->basetype == INT2OID ? PG_INT16_MIN :
		row->col->basetype == INT4OID ? PG_INT32_MIN : PG_INT64_MIN;
}

static inline int64
io_type_max(const IoRow *row)
{
	return row->col->basetype == INT2OID ? PG_INT16_MAX :
		row->col->basetype == INT4OID ? PG_INT32_MAX : PG_INT64_MAX;
}

/*
 * needs_statistics
 *		Whether the measurement may read row's statistics: an int2/int4
 *		column without a sequence, or a key narrower columns reference.
 */
static inline bool
io_needs_statistics(const IoRow *row)
{
	return row->seqs == NULL &&
		(row->col->basetype != INT8OID || row->narrow_ref);
}

/*
 * The reported rows of the database, sorted by relation OID and column
 * number, with their columns, sequences, leaves, foreign keys and
 * statistics bounds (not yet measured: IoRow.own is empty); *read_at is
 * SharedInvalidMessageCounter before the walk (see int_overflow.c).
 * Allocated in the current memory context: per reported table its IoRel,
 * per sequence its IoSeq, per btree index its SlIndex, per integer column
 * its IoCol, per reported column a row, per sequence feeding it a link
 * (some 0.8 kB per table of 3 integer columns); the walk's lookup tables
 * are freed before returning.
 */
extern IoRow **storagelab_int_overflow_rows(long *nrows, uint64 *read_at);

#endif							/* STORAGELAB_INT_OVERFLOW_CATALOG_H */
