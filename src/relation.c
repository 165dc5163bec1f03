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
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_authid_d.h"
#include "commands/defrem.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/syscache.h"

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

/* Why a relation is refused, from its pg_class facts. */
typedef enum SlCheck
{
	SL_CHECK_OK,
	SL_CHECK_KIND,				/* a relation kind not allowed */
	SL_CHECK_AM,				/* not the heap access method */
	SL_CHECK_UNLOGGED,			/* unlogged, during recovery */
	SL_CHECK_OTHER_TEMP			/* another session's temporary table */
} SlCheck;

/*
 * check_facts
 *		Whether a relation of this kind, access method and persistence can be
 *		read here by a reader allowing flags.
 */
static SlCheck
check_facts(char relkind, Oid relam, char relpersistence, bool other_temp,
			int flags)
{
	if (!relkind_allowed(relkind, flags))
		return SL_CHECK_KIND;
	/* A partitioned table has no storage and no access method. */
	if (relkind != RELKIND_PARTITIONED_TABLE && relam != HEAP_TABLE_AM_OID)
		return SL_CHECK_AM;
	/* An unlogged relation has only its init fork on a standby. */
	if (relpersistence == RELPERSISTENCE_UNLOGGED && RecoveryInProgress())
		return SL_CHECK_UNLOGGED;
	if (other_temp)
		return SL_CHECK_OTHER_TEMP;
	return SL_CHECK_OK;
}

/*
 * report_refusal
 *		The error for a relation check_facts() refused (never returns).
 */
static void
report_refusal(SlCheck check, const char *name, char relkind, Oid relam,
			   int flags, const char *caller)
{
	char	   *amname;

	switch (check)
	{
		case SL_CHECK_KIND:
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("cannot read pages of relation \"%s\"", name),
					 errdetail_relkind_not_supported(relkind),
					 errhint("%s() reads tables%s%s%s.", caller,
							 (flags & SL_ALLOW_PARTITIONED) ? ", partitioned tables" : "",
							 (flags & SL_ALLOW_MATVIEW) ? ", materialized views" : "",
							 (flags & SL_ALLOW_TOAST) ? " and TOAST tables" : "")));
			break;
		case SL_CHECK_AM:
			amname = get_am_name(relam);
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("relation \"%s\" does not use the heap access method", name),
					 errdetail("Its access method is \"%s\".", amname ? amname : "unknown"),
					 errhint("%s() understands only heap pages.", caller)));
			break;
		case SL_CHECK_UNLOGGED:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("cannot read unlogged relation \"%s\" during recovery", name),
					 errdetail("Unlogged relations have no data on a standby."),
					 errhint("Run %s() on the primary.", caller)));
			break;
		case SL_CHECK_OTHER_TEMP:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot access temporary tables of other sessions"),
					 errhint("Run %s() in the session that created the table.", caller)));
			break;
		case SL_CHECK_OK:
			break;
	}
	elog(ERROR, "unexpected relation check %d", (int) check);
}

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

/*
 * check_existence_and_privilege
 *		Before any lock: that relid exists (else false under
 *		SL_SKIP_UNREADABLE, an error otherwise) and that the caller may SELECT
 *		from it (an error otherwise, unless flags has SL_PRIVILEGE_CHECKED).
 */
static bool
check_existence_and_privilege(Oid relid, int flags, const char *caller)
{
	storagelab_check_scan_role();

	/*
	 * Check the privilege before taking a lock, so that a caller cannot queue
	 * a lock on a table it may not read.
	 */
	if (!OidIsValid(relid) || get_rel_relkind(relid) == '\0')
	{
		if (flags & SL_SKIP_UNREADABLE)
			return false;
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid),
				 errhint("Pass an existing table as a regclass, for example 'public.orders'::regclass.")));
	}

	/*
	 * A leaf partition reached through its partitioned parent needs no
	 * privilege of its own, as in a query on the parent.
	 */
	if (!(flags & SL_PRIVILEGE_CHECKED) &&
		pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", get_rel_name(relid)),
				 errdetail("%s() reads the table's pages, which requires SELECT privilege on the table.",
						   caller),
				 errhint("Grant SELECT on the table, or the role pg_read_all_data, to the calling role.")));
	return true;
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
 * storagelab_refuse_row_security
 *		For a reader named caller that reads every row of rel (opened with
 *		AccessShareLock): when row-level security is active for the current
 *		user, close rel and raise 42501, detail saying what the rows would
 *		reveal.  As pg_stats hides a table's statistics then; the owner (without
 *		FORCE), superusers and BYPASSRLS roles read every row.
 */
void
storagelab_refuse_row_security(Relation rel, const char *caller, const char *detail)
{
	const char *name;

	if (check_enable_rls(RelationGetRelid(rel), InvalidOid, false) != RLS_ENABLED)
		return;
	name = pstrdup(RelationGetRelationName(rel));
	relation_close(rel, AccessShareLock);
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("row-level security is active for table \"%s\"", name),
			 errdetail("%s", detail),
			 errhint("Run %s() as the table owner or as a role with BYPASSRLS.", caller)));
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
Relation
storagelab_open_heap_relation_ext(Oid relid, int flags, const char *caller,
								  SlOpenStatus *status)
{
	Relation	rel;
	SlOpenStatus status_unused;
	bool		skip = (flags & SL_SKIP_UNREADABLE) != 0;
	SlCheck		check;

	if (status == NULL)
		status = &status_unused;
	*status = SL_OPEN_OK;

	if (!check_existence_and_privilege(relid, flags, caller))
		return skip_relation(NULL, status);

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

	check = check_facts(rel->rd_rel->relkind, rel->rd_rel->relam,
						rel->rd_rel->relpersistence, RELATION_IS_OTHER_TEMP(rel),
						flags);
	if (check != SL_CHECK_OK)
	{
		char		relkind = rel->rd_rel->relkind;
		Oid			relam = rel->rd_rel->relam;
		const char *name = pstrdup(RelationGetRelationName(rel));

		if (skip)
			return skip_relation(rel, status);
		relation_close(rel, AccessShareLock);
		report_refusal(check, name, relkind, relam, flags, caller);
	}

	return rel;
}

/*
 * storagelab_lock_heap_relation
 *		The checks of storagelab_open_heap_relation_ext(), with the same
 *		flags, statuses and errors, without opening the relation: for views
 *		that read a few blocks of every table by relfilenode, where building
 *		a relation cache entry per table would cost more than the read and
 *		keep its memory for the rest of the session.
 *
 * Returns true with AccessShareLock on relid held and *facts read from the
 * committed pg_class row (locking processed invalidations first); the
 * caller releases the lock with UnlockRelationOid(relid, AccessShareLock).
 * Returns false, with *status set and no lock kept, where the _ext variant
 * returns NULL.
 */
bool
storagelab_lock_heap_relation(Oid relid, int flags, const char *caller,
							  SlOpenStatus *status, SlRelFacts *facts)
{
	HeapTuple	tup;
	Form_pg_class form;
	SlCheck		check;
	NameData	name;
	char		relkind;
	Oid			relam;

	*status = SL_OPEN_OK;
	if (!check_existence_and_privilege(relid, flags, caller))
	{
		*status = SL_OPEN_UNAVAILABLE;
		return false;
	}

	if (flags & SL_NOWAIT)
	{
		if (!ConditionalLockRelationOid(relid, AccessShareLock))
		{
			*status = SL_OPEN_LOCKED;
			return false;
		}
	}
	else
		LockRelationOid(relid, AccessShareLock);

	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
	{
		/* Dropped since the checks above. */
		UnlockRelationOid(relid, AccessShareLock);
		if (flags & SL_SKIP_UNREADABLE)
		{
			*status = SL_OPEN_UNAVAILABLE;
			return false;
		}
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid),
				 errdetail("The relation was dropped while %s() was starting.", caller)));
	}
	form = (Form_pg_class) GETSTRUCT(tup);
	relkind = form->relkind;
	relam = form->relam;
	namestrcpy(&name, NameStr(form->relname));
	facts->relkind = relkind;
	facts->relpersistence = form->relpersistence;
	facts->relfilenode = form->relfilenode;
	facts->reltablespace = form->reltablespace;
	facts->other_temp = form->relpersistence == RELPERSISTENCE_TEMP &&
		!isTempOrTempToastNamespace(form->relnamespace);
	ReleaseSysCache(tup);

	check = check_facts(relkind, relam, facts->relpersistence,
						facts->other_temp, flags);
	if (check != SL_CHECK_OK)
	{
		UnlockRelationOid(relid, AccessShareLock);
		if (flags & SL_SKIP_UNREADABLE)
		{
			*status = SL_OPEN_UNAVAILABLE;
			return false;
		}
		report_refusal(check, NameStr(name), relkind, relam, flags, caller);
	}
	return true;
}
