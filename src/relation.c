/*-------------------------------------------------------------------------
 *
 * relation.c
 *	  Opening a relation for one of storagelab's page readers.
 *
 * heap_visibility(), toast_profile() and column_profile() read heap pages
 * directly, visibility_map_count() a table's visibility map.  Before they
 * do, this file checks, in this order: that the relation exists, that
 * the caller may SELECT from it (no contrib page reader checks this; the
 * GRANT to pg_stat_scan_tables alone would let its members read any table),
 * that it is of a supported kind, that it uses the heap access method, and
 * that it is not an unlogged table on a standby (which has no data there) nor
 * another session's temporary table (whose pages live in that session's
 * local buffers and cannot be read from here).
 *
 * By default it waits for its AccessShareLock and raises an error for every
 * relation it refuses.  Views that run over many relations use its no-wait
 * mode instead (storagelab_open_heap_relation_ext() with SL_NOWAIT and
 * SL_SKIP_UNREADABLE): a locked relation, or one that cannot be read here,
 * gives NULL and a status rather than a wait or an error.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/xlog.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class.h"
#include "commands/defrem.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "catalog/pg_authid_d.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "compat.h"
#include "storagelab.h"

/*
 * relkind_allowed
 *		Whether relkind is one of the kinds named by allowed_kinds.
 */
static bool
relkind_allowed(char relkind, int allowed_kinds)
{
	switch (relkind)
	{
		case RELKIND_RELATION:
			return (allowed_kinds & SL_ALLOW_TABLE) != 0;
		case RELKIND_MATVIEW:
			return (allowed_kinds & SL_ALLOW_MATVIEW) != 0;
		case RELKIND_TOASTVALUE:
			return (allowed_kinds & SL_ALLOW_TOAST) != 0;
		case RELKIND_PARTITIONED_TABLE:
			return (allowed_kinds & SL_ALLOW_PARTITIONED) != 0;
		default:
			return false;
	}
}

/*
 * skip_relation
 *		Close rel (when open) and report it unavailable: the NULL result of
 *		storagelab_open_heap_relation_ext() under SL_SKIP_UNREADABLE.
 */
static Relation
skip_relation(Relation rel, SlOpenStatus *status)
{
	if (rel != NULL)
		relation_close(rel, AccessShareLock);
	*status = SL_OPEN_UNAVAILABLE;
	return NULL;
}

/*
 * storagelab_open_heap_relation
 *		Open relid with AccessShareLock for a page reader named caller, after
 *		checking existence, the caller's SELECT privilege, the relation kind,
 *		the access method and temporary-table ownership.
 *
 * Returns the open relation; the caller closes it with
 * relation_close(rel, AccessShareLock).  Every refusal is an ERROR with a
 * SQLSTATE and a hint; nothing here reads a page.  Waits for the lock
 * (unless allowed_kinds has SL_NOWAIT: see below).
 */
Relation
storagelab_open_heap_relation(Oid relid, int allowed_kinds, const char *caller)
{
	return storagelab_open_heap_relation_ext(relid, allowed_kinds, caller, NULL);
}

/*
 * storagelab_try_open_nowait
 *		Open relid, of any kind, with AccessShareLock if the lock is granted
 *		at once; no check of privilege or kind.
 *
 * Returns NULL with *status = SL_OPEN_LOCKED when the lock is not free (we
 * neither wait nor queue in front of an ACCESS EXCLUSIVE request), or
 * SL_OPEN_UNAVAILABLE when the relation was dropped meanwhile; no lock is
 * kept then.  The caller closes the relation with
 * relation_close(rel, AccessShareLock), which releases the lock.
 */
Relation
storagelab_try_open_nowait(Oid relid, SlOpenStatus *status)
{
	Relation	rel;

	if (!ConditionalLockRelationOid(relid, AccessShareLock))
	{
		*status = SL_OPEN_LOCKED;
		return NULL;
	}
	/* Locking processed invalidations: a dropped relation is gone now. */
	rel = try_relation_open(relid, NoLock);
	if (rel == NULL)
	{
		UnlockRelationOid(relid, AccessShareLock);
		*status = SL_OPEN_UNAVAILABLE;
		return NULL;
	}
	*status = SL_OPEN_OK;
	return rel;
}

/*
 * storagelab_open_heap_relation_ext
 *		storagelab_open_heap_relation(), with the modes of callers that must
 *		not wait or fail on one relation of many (the views).
 *
 * flags are the SL_ALLOW_* kinds plus:
 *	SL_NOWAIT: take AccessShareLock only if it is granted at once (as
 *		ConditionalLockRelationOid() does); otherwise return NULL with
 *		*status = SL_OPEN_LOCKED.  Nothing ever queues behind, or in front
 *		of, an ACCESS EXCLUSIVE lock then.
 *	SL_SKIP_UNREADABLE: where the strict mode raises an error for the
 *		relation itself (missing or dropped meanwhile, a kind or access
 *		method not allowed, another session's temporary table, unlogged
 *		during recovery), return NULL with *status = SL_OPEN_UNAVAILABLE.
 *		A missing SELECT privilege is still an error (42501).
 * The checks and their order are those of the strict mode; the privilege is
 * checked before any lock is requested.  status may be NULL.
 */
/*
 * storagelab_check_scan_role
 *		Raise 42501 unless the caller has the privileges of
 *		pg_stat_scan_tables, the role PostgreSQL has for functions that lock
 *		tables and read their pages (pg_visibility, pgstattuple).  Checked
 *		here rather than by revoking EXECUTE, so that the refusal names the
 *		role to grant; the views call it through their helpers, whose names
 *		the message therefore does not mention.
 */
void
storagelab_check_scan_role(void)
{
	if (!has_privs_of_role(GetUserId(), ROLE_PG_STAT_SCAN_TABLES))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to read table pages"),
				 errdetail("storagelab's page readers (heap_visibility(), toast_profile(), column_profile() and the views visibility and bytea_storage) need the privileges of pg_stat_scan_tables."),
				 errhint("Grant pg_stat_scan_tables, or pg_monitor, which includes it, to the calling role.")));
}

/*
 * storagelab_check_scan_role_sql
 *		SQL: storagelab_internal.check_scan_role() RETURNS void
 */
PG_FUNCTION_INFO_V1(storagelab_check_scan_role_sql);

Datum
storagelab_check_scan_role_sql(PG_FUNCTION_ARGS)
{
	storagelab_check_scan_role();
	PG_RETURN_VOID();
}

Relation
storagelab_open_heap_relation_ext(Oid relid, int flags, const char *caller,
								  SlOpenStatus *status)
{
	Relation	rel;
	AclResult	aclresult;
	SlOpenStatus status_unused;
	bool		skip = (flags & SL_SKIP_UNREADABLE) != 0;

	if (status == NULL)
		status = &status_unused;
	*status = SL_OPEN_OK;

	storagelab_check_scan_role();

	/*
	 * Check the privilege before taking a lock, so that a caller cannot queue
	 * a lock on a table it may not read.  pg_class_aclcheck() reports a
	 * missing relation itself.
	 */
	if (!OidIsValid(relid) || get_rel_relkind(relid) == '\0')
	{
		if (skip)
			return skip_relation(NULL, status);
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid),
				 errhint("Pass an existing table as a regclass, for example 'public.orders'::regclass.")));
	}

	/*
	 * A leaf partition reached through its partitioned parent needs no
	 * privilege of its own, as in a query on the parent.
	 */
	aclresult = (flags & SL_PRIVILEGE_CHECKED) ? ACLCHECK_OK :
		pg_class_aclcheck(relid, GetUserId(), ACL_SELECT);
	if (aclresult != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", get_rel_name(relid)),
				 errdetail("%s() reads the table's pages, which requires SELECT privilege on the table.",
						   caller),
				 errhint("Grant SELECT on the table, or the role pg_read_all_data, to the calling role.")));

	if (flags & SL_NOWAIT)
	{
		rel = storagelab_try_open_nowait(relid, status);
		if (rel == NULL && *status == SL_OPEN_LOCKED)
			return NULL;
	}
	else
		rel = try_relation_open(relid, AccessShareLock);

	/* The relation may have been dropped since the checks above. */
	if (rel == NULL)
	{
		if (skip)
			return skip_relation(NULL, status);
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid),
				 errdetail("The relation was dropped while %s() was starting.", caller)));
	}

	if (!relkind_allowed(rel->rd_rel->relkind, flags))
	{
		char		relkind = rel->rd_rel->relkind;
		const char *name = pstrdup(RelationGetRelationName(rel));

		if (skip)
			return skip_relation(rel, status);
		relation_close(rel, AccessShareLock);
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot read pages of relation \"%s\"", name),
				 errdetail_relkind_not_supported(relkind),
				 errhint("%s() reads tables%s%s%s.", caller,
						 (flags & SL_ALLOW_PARTITIONED) ? ", partitioned tables" : "",
						 (flags & SL_ALLOW_MATVIEW) ? ", materialized views" : "",
						 (flags & SL_ALLOW_TOAST) ? " and TOAST tables" : "")));
	}

	/* A partitioned table has no storage and no access method. */
	if (rel->rd_rel->relkind != RELKIND_PARTITIONED_TABLE &&
		rel->rd_rel->relam != HEAP_TABLE_AM_OID)
	{
		const char *name = pstrdup(RelationGetRelationName(rel));
		char	   *amname = get_am_name(rel->rd_rel->relam);

		if (skip)
			return skip_relation(rel, status);
		relation_close(rel, AccessShareLock);
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("relation \"%s\" does not use the heap access method", name),
				 errdetail("Its access method is \"%s\".", amname ? amname : "unknown"),
				 errhint("%s() understands only heap pages.", caller)));
	}

	/* An unlogged relation has only its init fork on a standby. */
	if (rel->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED &&
		RecoveryInProgress())
	{
		const char *name = pstrdup(RelationGetRelationName(rel));

		if (skip)
			return skip_relation(rel, status);
		relation_close(rel, AccessShareLock);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot read unlogged relation \"%s\" during recovery", name),
				 errdetail("Unlogged relations have no data on a standby."),
				 errhint("Run %s() on the primary.", caller)));
	}

	if (RELATION_IS_OTHER_TEMP(rel))
	{
		if (skip)
			return skip_relation(rel, status);
		relation_close(rel, AccessShareLock);
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot access temporary tables of other sessions"),
				 errhint("Run %s() in the session that created the table.", caller)));
	}

	return rel;
}
