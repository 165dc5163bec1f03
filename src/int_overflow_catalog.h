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

#include "nodes/pg_list.h"

#include "int_overflow.h"

/* A column of a relation: the key of the column and row hash tables. */
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
	NameData	relname;
	SlClass		cls;			/* its pg_class row, for the probes */
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
	IoKey		key;			/* hash key */
	IoRel	   *rel;
	Oid			atttypid;
	Oid			basetype;		/* int2, int4 or int8 */
	NameData	attname;
	bool		inherited;		/* attinhcount > 0 */
	IoKey		rowkey;			/* the row it belongs to */
	struct IoRow *row;			/* that row, when it is reported */
	Acl		   *attacl;			/* its column privileges, NULL if none */
	SlIndex    *index;			/* btree index leading with it, if any */
	bool		index_unique;
	int16		index_natts;
	struct IoCol *next_leaf;	/* the next leaf column of its row */
} IoCol;

/* A sequence feeding a row, and how (sequence or identity). */
typedef struct IoRowSeq
{
	IoSeq	   *seq;
	bool		identity;
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

/* A reported column (the own column of a table, or a tree's root column). */
typedef struct IoRow
{
	IoKey		key;			/* hash key */
	IoCol	   *col;
	int64		type_min;
	int64		type_max;
	IoCol	   *leaves;			/* columns of its leaf tables (relkind r),
								 * chained by next_leaf: no list per row */
	List	   *seqs;			/* IoRowSeq */
	List	   *narrow_refs;	/* IoRow: wider keys this column references */
	List	   *referenced_by;	/* IoFkPair where this row is the key */
	bool		narrow_ref;		/* a narrower FK column references it */
	List	   *own;			/* IoMeas of its own */
	bool		leaf_unreadable;	/* an index probe said unreadable */
	bool		stats_unreadable;
	/* its pg_statistic rows, [stainherit] (int_overflow_measure.c) */
	bool		stats_tuple[2];	/* the row exists */
	bool		stats_found[2];	/* and has integer bounds: */
	int64		stats_min[2];
	int64		stats_max[2];
	bool		visited;		/* scratch flag of referencing_columns() */
} IoRow;

/*
 * The reported rows of the database, sorted by relation OID and column
 * number, with their columns, sequences, leaves and foreign keys (not yet
 * measured: IoRow.own is empty).  Allocated in the current memory context;
 * per reported column, a hash entry for the column and one for the row, and
 * a small allocation per sequence feeding it (some 0.4 kB in all).
 */
extern IoRow **storagelab_int_overflow_rows(long *nrows, uint64 *read_at);

#endif							/* STORAGELAB_INT_OVERFLOW_CATALOG_H */
