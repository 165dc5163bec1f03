/*-------------------------------------------------------------------------
 *
 * visibility_map.c
 *	  Visibility-map counts of one relation, for the storagelab.visibility
 *	  view.
 *
 * Backs storagelab_internal.visibility_map_count(relation regclass).  Reads only the
 * relation's visibility-map fork (one VM page covers 32,672 heap pages), never
 * a heap page, and never waits for a lock: the view runs over every table of
 * a database and must not queue behind an ACCESS EXCLUSIVE lock.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/visibilitymap.h"
#include "catalog/pg_authid_d.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/acl.h"
#include "utils/rel.h"

#include "compat.h"
#include "storagelab.h"

PG_FUNCTION_INFO_V1(storagelab_visibility_map_count);

/*
 * storagelab_visibility_map_count
 *		visibility_map_count(relation regclass,
 *							 OUT pages bigint,
 *							 OUT all_visible_pages bigint,
 *							 OUT all_frozen_pages bigint)
 *
 * The relation's size in pages and the counts pg_visibility_map_summary()
 * gives, read without waiting (pg_relation_size() would wait): when
 * the relation is locked in a conflicting mode (or dropped meanwhile), or
 * is not a heap table, materialized view or TOAST table with storage, or is
 * another session's temporary table, or an unlogged relation on a standby,
 * the result is NULL.  The caller needs the privileges of
 * pg_stat_scan_tables, and SELECT on the relation or the privileges of
 * pg_read_all_stats (42501 otherwise).  The checks, and the lock taken
 * only if it is free at once, are relation.c's no-wait mode.
 */
Datum
storagelab_visibility_map_count(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};
	BlockNumber nblocks;
	Relation	rel;
	BlockNumber all_visible = 0;
	BlockNumber all_frozen = 0;
	int			flags = SL_ALLOW_TABLE | SL_ALLOW_MATVIEW | SL_ALLOW_TOAST |
		SL_NOWAIT | SL_SKIP_UNREADABLE;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	/*
	 * Visibility-map counts are statistics, as pg_class.relallvisible is: a
	 * member of pg_read_all_stats reads them for every table.
	 */
	if (has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS))
		flags |= SL_PRIVILEGE_CHECKED;
	rel = storagelab_open_heap_relation_ext(relid, flags, "visibility", NULL);
	if (rel == NULL)
		PG_RETURN_NULL();

	nblocks = RelationGetNumberOfBlocks(rel);
	if (nblocks > 0)
		visibilitymap_count(rel, &all_visible, &all_frozen);
	relation_close(rel, AccessShareLock);

	values[0] = Int64GetDatum((int64) nblocks);
	values[1] = Int64GetDatum((int64) all_visible);
	values[2] = Int64GetDatum((int64) all_frozen);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
