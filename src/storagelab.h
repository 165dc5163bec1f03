/*-------------------------------------------------------------------------
 *
 * storagelab.h
 *	  Declarations shared between storagelab's C files.
 *
 *-------------------------------------------------------------------------
 */
#ifndef STORAGELAB_H
#define STORAGELAB_H

#include "access/htup.h"
#include "utils/rel.h"
#include "utils/snapshot.h"

/* Relation kinds a page reader may be pointed at (bit flags). */
#define SL_ALLOW_TABLE		0x01	/* ordinary table */
#define SL_ALLOW_MATVIEW	0x02	/* materialized view */
#define SL_ALLOW_TOAST		0x04	/* TOAST table */
#define SL_ALLOW_PARTITIONED 0x08	/* partitioned table (no storage, no AM) */
#define SL_PRIVILEGE_CHECKED 0x10	/* SELECT already checked on the
									 * partitioned parent: skip it here */

/* xid_status.c */
extern bool storagelab_xid_did_commit(TransactionId xid, bool *committed);
extern bool storagelab_tuple_visible(HeapTupleHeader tuple, Snapshot snapshot);

/*
 * result_check.c: the SQL declaration calling a C function is the one the
 * library was built for (55000 "storagelab's library is newer than its SQL
 * objects" otherwise).  Pass arrays: the macros count them.
 */
#include "access/tupdesc.h"
#include "catalog/pg_type.h"
#include "fmgr.h"

extern void storagelab_check_result_desc(TupleDesc desc, const Oid *types,
										 int ntypes, const char *caller);
extern TupleDesc storagelab_result_desc(FunctionCallInfo fcinfo,
										const Oid *types, int ntypes,
										const char *caller);
extern void storagelab_check_args(FunctionCallInfo fcinfo, const Oid *types,
								  int ntypes, const char *caller);
#define SL_CHECK_RESULT(desc, types, caller) \
	storagelab_check_result_desc((desc), (types), lengthof(types), (caller))
#define SL_RESULT_DESC(fcinfo, types, caller) \
	storagelab_result_desc((fcinfo), (types), lengthof(types), (caller))
#define SL_CHECK_ARGS(fcinfo, types, caller) \
	storagelab_check_args((fcinfo), (types), lengthof(types), (caller))

/* relation.c */
extern Relation storagelab_open_heap_relation(Oid relid, int allowed_kinds,
											  const char *caller);

/*
 * More flags of storagelab_open_heap_relation(), for callers that run over
 * many relations (views) and must neither wait nor fail on one of them.
 */
#define SL_NOWAIT			0x20	/* take the lock only if it is free at
									 * once: else return NULL */
#define SL_SKIP_UNREADABLE	0x40	/* return NULL, not an error, for a
									 * relation missing or dropped, of
									 * another kind or access method,
									 * another session's temporary table or
									 * unlogged during recovery (a missing
									 * privilege is still an error) */

/* Why storagelab_open_heap_relation_ext() returned NULL. */
typedef enum SlOpenStatus
{
	SL_OPEN_OK,					/* opened */
	SL_OPEN_LOCKED,				/* SL_NOWAIT: the lock was not free */
	SL_OPEN_UNAVAILABLE			/* SL_SKIP_UNREADABLE: cannot be read here */
} SlOpenStatus;

extern Relation storagelab_open_heap_relation_ext(Oid relid, int flags,
												  const char *caller,
												  SlOpenStatus *status);
extern Relation storagelab_try_open_nowait(Oid relid, SlOpenStatus *status);
extern void storagelab_refuse_row_security(Relation rel, const char *caller,
										   const char *detail);
extern void storagelab_check_scan_role(void);

/* What storagelab_lock_heap_relation() read from a relation's pg_class row. */
typedef struct SlRelFacts
{
	char		relkind;
	char		relpersistence;
	bool		other_temp;		/* another session's temporary relation */
	Oid			relfilenode;	/* InvalidOid: a mapped catalog */
	Oid			reltablespace;	/* InvalidOid: the database's default */
} SlRelFacts;

extern bool storagelab_lock_heap_relation(Oid relid, int flags,
										  const char *caller,
										  SlOpenStatus *status,
										  SlRelFacts *facts);

/* column_profile.c: facts of a pg_statistic sample */
#include "utils/array.h"

typedef struct SampleFacts
{
	bool		has_width;		/* variable width with sampled values */
	double		mean_width;		/* stored bytes of a value, header included */
	double		width_stddev;
	bool		has_bounds;
	Datum		min_value;		/* numeric */
	Datum		max_value;		/* numeric */
	bool		has_all_integers;
	bool		all_integers;	/* numeric: every sampled value integral */
	const char *text_kind;		/* kind shared by every sampled value */
	bool		has_trimmed;
	double		trimmed_avg_width;	/* char(n): width without padding */
} SampleFacts;

extern void storagelab_summarize_sample(Oid typid, double null_frac,
										ArrayType *mcv, ArrayType *freqs,
										ArrayType *hist, bool rules,
										SampleFacts *out);

/* column_layout.c: the tuple layout model */
typedef struct LayoutColumn
{
	int16		len;			/* typlen */
	char		align;			/* typalign */
	char		storage;		/* attstorage */
	double		width;			/* stored bytes of a non-NULL value */
	double		null_frac;
	double		spread;			/* width stddev (0 fixed, < 0 unknown) */
	int32		key;			/* sort key when reordered (< 0: left out) */
} LayoutColumn;

typedef struct LayoutResult
{
	double		tuple_bytes;
	double		padding_bytes;
	bool		size_varies;
} LayoutResult;

extern void storagelab_tuple_layout(const LayoutColumn *cols, int ncols,
									bool reorder, LayoutResult *out);
extern int64 storagelab_heap_page_count(double tuples, double tuple_bytes,
										int fillfactor, bool size_varies);

#endif							/* STORAGELAB_H */
