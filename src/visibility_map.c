/*-------------------------------------------------------------------------
 *
 * visibility_map.c
 *	  Visibility-map counts of one relation, for the storagelab.visibility
 *	  view.
 *
 * Backs storagelab.visibility_map_count(relation regclass).  Reads only the
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
#include "access/xlog.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
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
 * the result is NULL.  The caller needs
 * SELECT on the relation (42501 otherwise).
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
	char		relkind;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	relkind = get_rel_relkind(relid);
	if (relkind == '\0')
		PG_RETURN_NULL();
	if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", get_rel_name(relid)),
				 errdetail("visibility_map_count() reads the table's visibility map, which requires SELECT privilege on the table."),
				 errhint("Grant SELECT on the table to the calling role.")));
	if (relkind != RELKIND_RELATION && relkind != RELKIND_MATVIEW &&
		relkind != RELKIND_TOASTVALUE)
		PG_RETURN_NULL();

	if (!ConditionalLockRelationOid(relid, AccessShareLock))
		PG_RETURN_NULL();
	rel = try_relation_open(relid, NoLock);
	if (rel == NULL)
	{
		UnlockRelationOid(relid, AccessShareLock);
		PG_RETURN_NULL();
	}
	/* An unlogged relation has only its init fork on a standby. */
	if (rel->rd_rel->relam != HEAP_TABLE_AM_OID || RELATION_IS_OTHER_TEMP(rel) ||
		(rel->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED &&
		 RecoveryInProgress()))
	{
		relation_close(rel, AccessShareLock);
		PG_RETURN_NULL();
	}

	nblocks = RelationGetNumberOfBlocks(rel);
	if (nblocks > 0)
		visibilitymap_count(rel, &all_visible, &all_frozen);
	relation_close(rel, AccessShareLock);

	values[0] = Int64GetDatum((int64) nblocks);
	values[1] = Int64GetDatum((int64) all_visible);
	values[2] = Int64GetDatum((int64) all_frozen);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
