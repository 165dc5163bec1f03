/*-------------------------------------------------------------------------
 *
 * int_overflow.h
 *	  The probes of src/int_overflow.c, shared with the catalog walk of
 *	  src/int_overflow_catalog.c (storagelab_internal.int_overflow_measurements()).
 *
 *-------------------------------------------------------------------------
 */
#ifndef STORAGELAB_INT_OVERFLOW_H
#define STORAGELAB_INT_OVERFLOW_H

#include "access/htup.h"
#include "utils/acl.h"

/*
 * Status strings of the probes (documented in doc/int_overflow.md), defined once in
 * int_overflow.c so that a status can be compared by pointer.
 */
extern const char storagelab_status_ok[];
extern const char storagelab_status_unreadable[];
extern const char storagelab_status_locked[];
extern const char storagelab_status_unavailable[];
extern const char storagelab_status_empty[];
extern const char storagelab_status_approximate[];
extern const char storagelab_status_no_statistics[];

#define SL_STATUS_OK			storagelab_status_ok
#define SL_STATUS_UNREADABLE	storagelab_status_unreadable
#define SL_STATUS_LOCKED		storagelab_status_locked
#define SL_STATUS_UNAVAILABLE	storagelab_status_unavailable
#define SL_STATUS_EMPTY			storagelab_status_empty
#define SL_STATUS_APPROXIMATE	storagelab_status_approximate
#define SL_STATUS_NO_STATISTICS storagelab_status_no_statistics

/*
 * Each probe returns one of the status strings above and sets its outputs
 * only when the status says there is a value: "ok" for a sequence, "ok" or
 * "approximate" for an index, "ok" for statistics.
 */
extern const char *storagelab_sequence_state(Oid seqid, bool known_sequence,
											 int64 *last_value, bool *is_called);
extern const char *storagelab_index_bounds(Oid indexid, int64 *min_value,
										   int64 *max_value);
extern const char *storagelab_stats_bounds(Oid relid, AttrNumber attnum,
										   int64 *min_value, int64 *max_value);
extern const char *storagelab_stats_access(Oid relid, AttrNumber attnum,
										   bool *inherited);
extern bool storagelab_stats_tuple_bounds(HeapTuple statstup,
										  int64 *min_value, int64 *max_value);

/*
 * What the view's catalog walk read of a relation's pg_class row, so that
 * its probes look nothing up in the catalog cache: the cache keeps every
 * entry to the end of the session (0.5 kB per relation).
 */
typedef struct SlClass
{
	Oid			relid;
	Oid			relowner;
	Oid			relnamespace;
	Oid			relfilenode;
	Oid			reltablespace;
	Oid			relam;
	char		relkind;
	char		relpersistence;
	bool		relrowsecurity;
	bool		relhassubclass;
	float4		reltuples;		/* -1: never vacuumed or analyzed */
	Acl		   *relacl;			/* NULL: the default privileges */
} SlClass;

/* A btree index as the walk read it (pg_class and pg_index). */
typedef struct SlIndex
{
	Oid			relid;
	Oid			relfilenode;
	Oid			reltablespace;
	char		relpersistence;
	bool		descending;		/* its first column is DESC */
} SlIndex;

extern void storagelab_class_watch_begin(void);
extern void storagelab_class_from_tuple(SlClass *c, HeapTuple classtup,
										TupleDesc desc);
extern bool storagelab_class_allows(const SlClass *c, AclMode mode);
extern bool storagelab_column_allows(const SlClass *c, const Acl *attacl,
									 AclMode mode);
extern const char *storagelab_sequence_state_known(const SlClass *seq,
												   uint64 read_at,
												   int64 *last_value,
												   bool *is_called);
extern const char *storagelab_index_bounds_known(const SlClass *heap,
												 const Acl *attacl,
												 Oid keytype,
												 const SlIndex *index,
												 uint64 read_at,
												 int64 *min_value,
												 int64 *max_value);
extern const char *storagelab_stats_access_known(const SlClass *rel,
												 const Acl *attacl,
												 bool *inherited);

#endif							/* STORAGELAB_INT_OVERFLOW_H */
