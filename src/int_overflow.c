/*-------------------------------------------------------------------------
 *
 * int_overflow.c
 *	  Cheap, exact probes behind the storagelab.int_overflow view.
 *
 * Three SQL functions, each called once per object by the view:
 *
 * storagelab_internal.int_overflow_sequence_state(regclass) reads a sequence's last
 *	  value the way pg_sequences does, but never fails and never waits: a
 *	  sequence the caller may not read, one another session holds ACCESS
 *	  EXCLUSIVE on (DROP, a migration), another session's temporary sequence,
 *	  an unlogged sequence on a standby and a concurrently dropped one are all
 *	  reported through a status instead.
 *
 * storagelab_internal.int_overflow_index_bounds(regclass) returns the smallest and the
 *	  largest visible non-NULL value of the first key column of a btree index
 *	  by descending the index once from each end (O(log n), like the
 *	  planner's get_actual_variable_range()); no table scan.  The same
 *	  refusals as above are reported as a status.  Where each end leaf holds
 *	  a visible entry (nearly always) the pages are read by relfilenode,
 *	  without opening the table or the index and without writing anything;
 *	  otherwise through an index scan (see index_bounds_without_relcache()).
 *
 * storagelab_internal.int_overflow_stats_bounds(regclass, smallint) returns the
 *	  smallest and largest value that ANALYZE recorded for a column (histogram
 *	  ends and most common values), read from pg_statistic through the syscache
 *	  under the same rules as the pg_stats view, without its text conversions.
 *
 * Each SQL function is a thin wrapper around a C helper declared in
 * int_overflow.h (storagelab_sequence_state(), storagelab_index_bounds(),
 * storagelab_stats_bounds()), which the catalog walk behind the view
 * (int_overflow_catalog.c) calls directly, once per object.
 *
 * All three check the caller's privileges themselves (SELECT or USAGE on the
 * sequence; SELECT on the table or on the column), so they reveal nothing
 * that "SELECT last_value FROM seq", "SELECT min(col), max(col)" or pg_stats
 * would not; that is why they are executable by PUBLIC.  The first two take
 * their lock conditionally and release it as soon as they are done, so that the
 * view neither queues behind a running ALTER TABLE nor piles up one lock per
 * object of a large database until the end of the transaction.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/nbtree.h"
#include "access/relation.h"
#include "access/relscan.h"
#include "access/skey.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "access/visibilitymap.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_authid_d.h"
#include "catalog/pg_class.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type_d.h"
#include "commands/sequence.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/sinval.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rls.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "compat.h"
#include "int_overflow.h"
#include "storagelab.h"

/* The lock a sequence is read under: see storagelab_sequence_state(). */
#define SEQUENCE_READ_LOCK	RowExclusiveLock

PG_FUNCTION_INFO_V1(storagelab_int_overflow_sequence_state);
PG_FUNCTION_INFO_V1(storagelab_int_overflow_index_bounds);
PG_FUNCTION_INFO_V1(storagelab_int_overflow_stats_bounds);

/*
 * How many index entries int_overflow_index_bounds() looks at from one end
 * before it stops looking for a visible one.  Past this many dead entries
 * (a mass DELETE of the newest rows not yet vacuumed) it returns the
 * outermost key found, which is an upper bound of the live values, and says
 * so with the status "approximate".
 */
#define SL_MAX_DEAD_ENTRIES		10000

const char	storagelab_status_ok[] = "ok";
const char	storagelab_status_unreadable[] = "unreadable";
const char	storagelab_status_locked[] = "locked";
const char	storagelab_status_unavailable[] = "unavailable";
const char	storagelab_status_empty[] = "empty";
const char	storagelab_status_approximate[] = "approximate";
const char	storagelab_status_no_statistics[] = "no statistics";

/*
 * locator_in_database
 *		The RelFileLocator of a relation of this database from its pg_class
 *		reltablespace (0: the database's default) and relfilenode.
 */
static RelFileLocator
locator_in_database(Oid reltablespace, Oid relfilenode)
{
	RelFileLocator locator;

	storagelab_set_rel_file_locator(locator,
									OidIsValid(reltablespace) ?
									reltablespace : MyDatabaseTableSpace,
									MyDatabaseId, relfilenode);
	return locator;
}

/*
 * check_call
 *		The SQL declaration calling one of the three probes is the one this
 *		library serves (arguments and result: see result_check.c); first
 *		thing in each, before any argument is read.  type2 is the type of
 *		the second result column: bigint, or boolean for is_called.
 */
static void
check_call(FunctionCallInfo fcinfo, int nargs, Oid type2, const char *caller)
{
	static const Oid arg_types[] = {REGCLASSOID, INT2OID};
	Oid			result_types[] = {INT8OID, type2, TEXTOID};

	storagelab_check_args(fcinfo, arg_types, nargs, caller);
	SL_RESULT_DESC(fcinfo, result_types, caller);
}

/*
 * form_result
 *		Build the function's composite result from three values; a NULL
 *		pointer for v1/v2 gives a NULL field.  The caller ran check_call().
 */
static Datum
form_result(FunctionCallInfo fcinfo, Datum *v1, Datum *v2, const char *status)
{
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);

	if (v1)
		values[0] = *v1;
	else
		nulls[0] = true;
	if (v2)
		values[1] = *v2;
	else
		nulls[1] = true;
	values[2] = CStringGetTextDatum(status);

	return HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls));
}

/*
 * unreadable_on_this_server
 *		Whether relations of this persistence cannot be read here: another
 *		session's temporary relation, or an unlogged one during recovery (its
 *		main fork does not exist on a standby).
 */
static bool
unreadable_on_this_server(Relation rel)
{
	if (RELATION_IS_OTHER_TEMP(rel))
		return true;
	if (rel->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED &&
		RecoveryInProgress())
		return true;
	return false;
}

/*
 * open_conditionally
 *		Take AccessShareLock on relid without waiting and open it.
 *
 * Returns NULL with *status set when the lock is not available ("locked") or
 * the relation was dropped meanwhile ("unavailable").  The caller closes the
 * relation with relation_close(rel, AccessShareLock), which also releases
 * the lock.
 */
static Relation
open_conditionally(Oid relid, const char **status)
{
	SlOpenStatus open_status;
	Relation	rel = storagelab_try_open_nowait(relid, &open_status);

	if (rel == NULL)
		*status = open_status == SL_OPEN_LOCKED ?
			SL_STATUS_LOCKED : SL_STATUS_UNAVAILABLE;
	return rel;
}

/*
 * read_sequence_tuple
 *		last_value and is_called from the one tuple of a sequence's page in buf
 *		(pinned, not locked); seqid names the sequence in errors.
 *
 * Takes a share lock on the buffer, reads the tuple the way sequence.c lays
 * it out, and unlocks and releases the buffer.  Never writes the page
 * (unlike nextval(), it does not clear a stale xmax).
 */
static void
read_sequence_tuple(Buffer buf, Oid seqid,
					int64 *last_value, bool *is_called)
{
	Page		page;
	ItemId		lp;
	HeapTupleHeader tuphdr;
	Form_pg_sequence_data seq;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	if (PageGetMaxOffsetNumber(page) < FirstOffsetNumber)
	{
		UnlockReleaseBuffer(buf);
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("sequence \"%s\" has no tuple on its page", get_rel_name(seqid))));
	}
	lp = PageGetItemId(page, FirstOffsetNumber);
	if (!ItemIdIsNormal(lp))
	{
		UnlockReleaseBuffer(buf);
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("sequence \"%s\" has an invalid line pointer", get_rel_name(seqid))));
	}
	tuphdr = (HeapTupleHeader) PageGetItem(page, lp);
	seq = (Form_pg_sequence_data) ((char *) tuphdr + tuphdr->t_hoff);
	*last_value = seq->last_value;
	*is_called = seq->is_called;
	UnlockReleaseBuffer(buf);
}

/*
 * storagelab_sequence_state
 *		last_value and is_called of sequence seqid as stored on its page (what
 *		pg_sequences shows: with CACHE > 1 that is the end of the range handed
 *		out to a session's cache).
 *
 * Returns "ok" with *last_value and *is_called set, or "unreadable" (the
 * caller has neither SELECT nor USAGE on the sequence, nor the privileges
 * of pg_read_all_stats), "locked" (another
 * session holds ACCESS EXCLUSIVE on it; we do not wait) or "unavailable"
 * (dropped meanwhile, another session's temporary sequence, an unlogged
 * sequence on a standby).
 *
 * A relation that is not a sequence is an error, unless known_sequence: the
 * caller found relid in pg_sequence and checks nothing more up front (one
 * catalog lookup less per sequence); a relation that is not a sequence once
 * locked (its OID reused since) is then "unavailable".
 *
 * The sequence is not opened: building a relation cache entry for each of
 * 10,000 sequences was most of the view's first call in a new session.
 * After the lock (which processes invalidations, so that a sequence dropped
 * or given a new relfilenode before it is seen as such) the pg_class row
 * comes from the syscache, and block 0 is read by its relfilenode with
 * ReadBufferWithoutRelcache().  The session's own temporary sequences live
 * in local buffers, which only a relation cache entry reaches: those are
 * opened as before.  Reads through ReadBufferWithoutRelcache() are not
 * counted in pg_statio_all_sequences.
 *
 * Takes RowExclusiveLock conditionally, as PostgreSQL's own readers of a
 * sequence do (pg_sequence_last_value(), nextval()): it conflicts with the
 * ShareRowExclusiveLock of ALTER SEQUENCE, which may give the sequence a new
 * relfilenode and truncate the old one while we read it by its number; it is
 * allowed during recovery.  Released before returning; the page is read
 * under a share buffer lock and never written.
 */

const char *
storagelab_sequence_state(Oid relid, bool known_sequence,
						  int64 *last_value, bool *is_called)
{
	bool		is_missing = false;
	char		relkind;
	HeapTuple	classtup;
	Form_pg_class classform;
	char		relpersistence;
	Oid			relnamespace;
	Oid			relfilenode;
	Oid			reltablespace;

	if (!known_sequence)
	{
		relkind = get_rel_relkind(relid);
		if (relkind == '\0')
			return SL_STATUS_UNAVAILABLE;
		if (relkind != RELKIND_SEQUENCE)
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("\"%s\" is not a sequence", get_rel_name(relid)),
					 errhint("Pass a sequence, for example 'public.orders_id_seq'::regclass.")));
	}

	/*
	 * Privileges before the lock, so no lock is queued for a refused caller.
	 * A sequence's position is a statistic, as pg_stat_statements's query
	 * texts are: members of pg_read_all_stats (pg_monitor) read it without
	 * any privilege on the sequence.
	 */
	if (pg_class_aclcheck_ext(relid, GetUserId(), ACL_SELECT | ACL_USAGE,
							  &is_missing) != ACLCHECK_OK &&
		(is_missing || !has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS)))
		return is_missing ? SL_STATUS_UNAVAILABLE : SL_STATUS_UNREADABLE;

	if (!ConditionalLockRelationOid(relid, SEQUENCE_READ_LOCK))
		return SL_STATUS_LOCKED;

	/* Locking processed invalidations: this row is the committed one. */
	classtup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(classtup))
	{
		UnlockRelationOid(relid, SEQUENCE_READ_LOCK);
		return SL_STATUS_UNAVAILABLE;
	}
	classform = (Form_pg_class) GETSTRUCT(classtup);
	relkind = classform->relkind;
	relpersistence = classform->relpersistence;
	relnamespace = classform->relnamespace;
	relfilenode = classform->relfilenode;
	reltablespace = classform->reltablespace;
	ReleaseSysCache(classtup);

	/*
	 * Not a sequence any more (OID reused), another session's temporary
	 * sequence (its page is in that session's local buffers), or an unlogged
	 * one on a standby (no main fork there).
	 */
	if (relkind != RELKIND_SEQUENCE ||
		(relpersistence == RELPERSISTENCE_TEMP &&
		 !isTempOrTempToastNamespace(relnamespace)) ||
		(relpersistence == RELPERSISTENCE_UNLOGGED && RecoveryInProgress()))
	{
		UnlockRelationOid(relid, SEQUENCE_READ_LOCK);
		return SL_STATUS_UNAVAILABLE;
	}

	if (relpersistence == RELPERSISTENCE_TEMP || !OidIsValid(relfilenode))
	{
		/* Our own temporary sequence: local buffers, through the relcache. */
		Relation	rel = relation_open(relid, NoLock);

		read_sequence_tuple(ReadBuffer(rel, 0), relid, last_value, is_called);
		relation_close(rel, NoLock);
	}
	else
	{
		RelFileLocator locator = locator_in_database(reltablespace, relfilenode);

		read_sequence_tuple(ReadBufferWithoutRelcache(locator, MAIN_FORKNUM, 0,
													  RBM_NORMAL, NULL,
													  relpersistence == RELPERSISTENCE_PERMANENT),
							relid, last_value, is_called);

		/*
		 * Release its file now, not at the end of the transaction: the view
		 * reads every sequence of the database in one transaction (100,000
		 * storage manager entries were 25 MB).
		 */
		smgrclose(storagelab_smgropen_shared(locator));
	}

	UnlockRelationOid(relid, SEQUENCE_READ_LOCK);

	return SL_STATUS_OK;
}

/*
 * storagelab_int_overflow_sequence_state
 *		SQL: storagelab_internal.int_overflow_sequence_state(seq regclass,
 *			 OUT last_value bigint, OUT is_called boolean, OUT status text)
 *
 * storagelab_sequence_state() as a record; NULL values unless status is ok.
 */
Datum
storagelab_int_overflow_sequence_state(PG_FUNCTION_ARGS)
{
	int64		last_value = 0;
	bool		is_called = false;
	const char *status;
	Datum		d_last;
	Datum		d_called;

	check_call(fcinfo, 1, BOOLOID, "int_overflow_sequence_state");
	status = storagelab_sequence_state(PG_GETARG_OID(0), false,
									   &last_value, &is_called);
	if (status != SL_STATUS_OK)
		PG_RETURN_DATUM(form_result(fcinfo, NULL, NULL, status));
	d_last = Int64GetDatum(last_value);
	d_called = BoolGetDatum(is_called);
	PG_RETURN_DATUM(form_result(fcinfo, &d_last, &d_called, status));
}

/*
 * int_key_to_int64
 *		The int2/int4/int8 index key datum as int64.
 */
static int64
int_key_to_int64(Datum d, Oid typid)
{
	switch (typid)
	{
		case INT2OID:
			return (int64) DatumGetInt16(d);
		case INT4OID:
			return (int64) DatumGetInt32(d);
		default:
			return DatumGetInt64(d);
	}
}

/*
 * index_endpoint
 *		The first visible non-NULL key of index in direction dir.
 *
 * Walks index entries from that end, reading each key from the index tuple
 * (an index-only access).  An entry counts when the visibility map says its
 * heap page is all-visible, or else when the heap tuple it points to is
 * visible to the snapshot (one heap page read; as in any index scan this may
 * prune the page or set hint bits).  Returns false when the index has no
 * non-NULL key.  After SL_MAX_DEAD_ENTRIES invisible entries it returns the
 * outermost key seen and sets *approximate.  Used only where the
 * relcache-free read below does not answer: an end leaf without a visible
 * non-NULL entry, a temporary table, anything unusual.
 */
static bool
index_endpoint(Relation heap, Relation index, Snapshot snapshot,
			   ScanDirection dir, int64 *result, bool *approximate)
{
	IndexScanDesc scan;
	ScanKeyData key;
	TupleTableSlot *slot;
	Buffer		vmbuffer = InvalidBuffer;
	/* a domain key is stored as its base type */
	Oid			keytype = getBaseType(TupleDescAttr(RelationGetDescr(index), 0)->atttypid);
	ItemPointer tid;
	bool		found = false;
	bool		have_outermost = false;
	int64		outermost = 0;
	int			examined = 0;

	/* "key IS NOT NULL": btree then starts at the first non-NULL entry. */
	ScanKeyEntryInitialize(&key, SK_ISNULL | SK_SEARCHNOTNULL, 1,
						   InvalidStrategy, InvalidOid, InvalidOid,
						   InvalidOid, (Datum) 0);

	slot = table_slot_create(heap, NULL);
	scan = index_beginscan(heap, index, snapshot, NULL, 1, 0, SO_NONE);
	scan->xs_want_itup = true;
	index_rescan(scan, &key, 1, NULL, 0);

	while ((tid = index_getnext_tid(scan, dir)) != NULL)
	{
		bool		isnull;
		Datum		d;
		int64		value;

		CHECK_FOR_INTERRUPTS();

		d = index_getattr(scan->xs_itup, 1, scan->xs_itupdesc, &isnull);
		if (isnull)
			continue;			/* cannot happen with SK_SEARCHNOTNULL */
		value = int_key_to_int64(d, keytype);
		if (!have_outermost)
		{
			outermost = value;
			have_outermost = true;
		}

		if (VM_ALL_VISIBLE(heap, ItemPointerGetBlockNumber(tid), &vmbuffer) ||
			index_fetch_heap(scan, slot))
		{
			*result = value;
			found = true;
			break;
		}

		if (++examined >= SL_MAX_DEAD_ENTRIES)
		{
			*result = outermost;
			*approximate = true;
			found = true;
			break;
		}
	}

	if (BufferIsValid(vmbuffer))
		ReleaseBuffer(vmbuffer);
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);

	return found;
}

/*
 * The relcache-free read of an index's ends.
 *
 * Opening a table and its index builds a relation cache entry for each (the
 * index's alone holds some 2 kB of "index info"), which stays for the rest of
 * the session: for the 20,000 indexes a view probes in a database of 100,000
 * tables that was about 100 MB, and building them most of the first call.
 * index_bounds_without_relcache() reads instead, by relfilenode with
 * ReadBufferWithoutRelcache() as the sequence probe does, the btree's
 * metapage, one page per level down its leftmost or rightmost edge, the end
 * leaf, and for its entries the heap pages they point to, whose tuples are
 * checked against the snapshot by storagelab_tuple_visible(): no hint bit
 * is set and no page is pruned, so nothing is ever written.  It answers only
 * when each end leaf holds a visible non-NULL entry, which it then finds
 * exactly as the index scan below would (the first such entry in scan
 * order); anything else (an empty or all-NULL end leaf, an end leaf of only
 * dead entries, a temporary or unlogged-on-a-standby relation, a relation
 * that is not a valid btree over an integer or not a heap, a page that is
 * not what a btree's page should be) leaves the answer to the index scan,
 * which also raises the errors.
 */

/* An entry of an end leaf, copied before the leaf's lock is released. */
typedef struct LeafEntry
{
	int64		value;
	ItemPointerData tid;
} LeafEntry;

/*
 * heap_tid_visible
 *		Whether the heap tuple tid points to, or a later member of its HOT
 *		chain, is visible to snapshot; the page is read by relfilenode under
 *		a share lock and never changed.
 *
 * Follows the chain as heap_hot_search_buffer() does (a redirect at its
 * start, then t_ctid while the tuple is HOT-updated and the next xmin is
 * the previous update xid), but judges each member with
 * storagelab_tuple_visible(), which sets no hint bit.
 */
static bool
heap_tid_visible(RelFileLocator locator, bool permanent, ItemPointer tid,
				 Snapshot snapshot)
{
	BlockNumber blkno = ItemPointerGetBlockNumber(tid);
	OffsetNumber offnum = ItemPointerGetOffsetNumber(tid);
	TransactionId prev_xmax = InvalidTransactionId;
	bool		at_chain_start = true;
	bool		visible = false;
	int			steps;
	Buffer		buf;
	Page		page;

	buf = ReadBufferWithoutRelcache(locator, MAIN_FORKNUM, blkno,
									RBM_NORMAL, NULL, permanent);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	/* a chain is never longer than the page's line pointers */
	for (steps = 0; steps <= MaxHeapTuplesPerPage; steps++)
	{
		ItemId		lp;
		HeapTupleHeader tup;

		if (offnum < FirstOffsetNumber || offnum > PageGetMaxOffsetNumber(page))
			break;
		lp = PageGetItemId(page, offnum);
		if (!ItemIdIsNormal(lp))
		{
			if (ItemIdIsRedirected(lp) && at_chain_start)
			{
				offnum = ItemIdGetRedirect(lp);
				at_chain_start = false;
				continue;
			}
			break;				/* dead or unused: nothing visible */
		}
		tup = (HeapTupleHeader) PageGetItem(page, lp);
		/* an index entry never points into a chain's middle */
		if (at_chain_start && HeapTupleHeaderIsHeapOnly(tup))
			break;
		/* the chain is broken where xmin is not the previous update xid */
		if (TransactionIdIsValid(prev_xmax) &&
			!TransactionIdEquals(prev_xmax, HeapTupleHeaderGetXmin(tup)))
			break;
		if (storagelab_tuple_visible(tup, snapshot))
		{
			visible = true;
			break;
		}
		if (!HeapTupleHeaderIsHotUpdated(tup) ||
			ItemPointerGetBlockNumber(&tup->t_ctid) != blkno)
			break;
		offnum = ItemPointerGetOffsetNumber(&tup->t_ctid);
		at_chain_start = false;
		prev_xmax = HeapTupleHeaderGetUpdateXid(tup);
	}
	UnlockReleaseBuffer(buf);
	return visible;
}

/*
 * btree_end_leaf
 *		Copy the non-NULL, not killed entries of the leftmost or rightmost
 *		leaf of the btree at locator into entries (room for
 *		MaxTIDsPerBTreePage), one per heap TID, in the order an index scan
 *		from that end returns them (but a posting list's TIDs, which share
 *		one key, in their stored order); *n is set to their number.
 *
 * Descends from the metapage's fast root down the leftmost or rightmost
 * downlinks, moving right past deleted and half-dead pages and, toward the
 * right end, past pages that a concurrent split left with a right sibling,
 * as the btree code's own descent to an end does.  Each page is read under
 * a share lock, released before the next one is read; no lock or pin is
 * kept on return (with an MVCC snapshot, a heap TID whose line pointer was
 * reused since holds a tuple the snapshot cannot see).  Returns false when
 * a page is not what it should be, or the walk right goes on too long: the
 * caller then leaves the end to the index scan.
 */
static bool
btree_end_leaf(RelFileLocator locator, bool permanent, int16 keylen,
			   Oid keytype, bool rightmost, LeafEntry *entries, int *n)
{
	Buffer		buf;
	Page		page;
	BTMetaPageData *meta;
	BTPageOpaque opaque = NULL;
	BlockNumber blkno;
	uint32		level;
	int			moves = 0;
	OffsetNumber maxoff;
	OffsetNumber first;
	int			i;

	*n = 0;
	buf = ReadBufferWithoutRelcache(locator, MAIN_FORKNUM, BTREE_METAPAGE,
									RBM_NORMAL, NULL, permanent);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	meta = BTPageGetMeta(page);
	if (PageIsNew(page) || !(BTPageGetOpaque(page)->btpo_flags & BTP_META) ||
		meta->btm_magic != BTREE_MAGIC || meta->btm_version < BTREE_MIN_VERSION ||
		meta->btm_fastroot == P_NONE)
	{
		UnlockReleaseBuffer(buf);
		return false;
	}
	blkno = meta->btm_fastroot;
	level = meta->btm_fastlevel;
	UnlockReleaseBuffer(buf);

	for (;;)
	{
		IndexTuple	itup;

		CHECK_FOR_INTERRUPTS();
		if (blkno == P_NONE || blkno == BTREE_METAPAGE)
			return false;
		buf = ReadBufferWithoutRelcache(locator, MAIN_FORKNUM, blkno,
										RBM_NORMAL, NULL, permanent);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (PageIsNew(page) ||
			PageGetSpecialSize(page) != MAXALIGN(sizeof(BTPageOpaqueData)))
		{
			UnlockReleaseBuffer(buf);
			return false;
		}
		opaque = BTPageGetOpaque(page);
		if (P_IGNORE(opaque) || (rightmost && !P_RIGHTMOST(opaque)))
		{
			/* deleted, half-dead, or split since its parent was read */
			blkno = opaque->btpo_next;
			UnlockReleaseBuffer(buf);
			if (++moves > 1000)
				return false;
			continue;
		}
		if (opaque->btpo_level != level)
		{
			UnlockReleaseBuffer(buf);
			return false;
		}
		if (P_ISLEAF(opaque))
			break;				/* buf stays locked */

		/* An internal page: follow its first or last downlink. */
		maxoff = PageGetMaxOffsetNumber(page);
		first = P_FIRSTDATAKEY(opaque);
		if (maxoff < first || level == 0)
		{
			UnlockReleaseBuffer(buf);
			return false;
		}
		itup = (IndexTuple) PageGetItem(page,
										PageGetItemId(page, rightmost ? maxoff : first));
		blkno = BTreeTupleGetDownLink(itup);
		level--;
		moves = 0;
		UnlockReleaseBuffer(buf);
	}

	/* The end leaf: its entries in scan order, NULLs and killed ones left out. */
	maxoff = PageGetMaxOffsetNumber(page);
	first = P_FIRSTDATAKEY(opaque);
	for (i = 0; first + i <= maxoff; i++)
	{
		OffsetNumber off = rightmost ? maxoff - i : first + i;
		ItemId		iid = PageGetItemId(page, off);
		IndexTuple	itup;
		int64		value;
		int			ntids;
		int			t;

		/*
		 * Killed (LP_DEAD): an index scan skips it too, except in a
		 * transaction started on a standby, which cannot trust the
		 * primary's kill marks.
		 */
		if (ItemIdIsDead(iid) ? !TransactionStartedDuringRecovery() :
			!ItemIdIsNormal(iid))
			continue;
		itup = (IndexTuple) PageGetItem(page, iid);
		if (IndexTupleHasNulls(itup) &&
			att_isnull(0, (uint8 *) itup + sizeof(IndexTupleData)))
			continue;
		/* the first key column starts the (maximally aligned) data */
		value = int_key_to_int64(fetch_att((char *) itup +
										   IndexInfoFindDataOffset(itup->t_info),
										   true, keylen),
								 keytype);
		ntids = BTreeTupleIsPosting(itup) ? BTreeTupleGetNPosting(itup) : 1;
		/* a posting list's TIDs share its key: their order does not matter */
		for (t = 0; t < ntids; t++)
		{
			if (*n >= MaxTIDsPerBTreePage)
			{
				UnlockReleaseBuffer(buf);
				return false;
			}
			entries[*n].value = value;
			entries[*n].tid = BTreeTupleIsPosting(itup) ?
				*BTreeTupleGetPostingN(itup, t) : itup->t_tid;
			(*n)++;
		}
	}
	UnlockReleaseBuffer(buf);
	return true;
}

/*
 * btree_end_value
 *		The first visible non-NULL key from one end of the btree (the
 *		leftmost entry for ForwardScanDirection, as index_endpoint() scans).
 *		Returns false when the end leaf has none, or could not be read: the
 *		caller then asks index_endpoint().
 */
static bool
btree_end_value(RelFileLocator index_locator, RelFileLocator heap_locator,
				bool permanent, int16 keylen, Oid keytype, Snapshot snapshot,
				ScanDirection dir, LeafEntry *entries, int64 *result)
{
	int			n;
	int			i;

	if (!btree_end_leaf(index_locator, permanent, keylen, keytype,
						ScanDirectionIsBackward(dir), entries, &n))
		return false;
	for (i = 0; i < n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		if (heap_tid_visible(heap_locator, permanent, &entries[i].tid, snapshot))
		{
			*result = entries[i].value;
			return true;
		}
	}
	return false;
}

/*
 * locator_of
 *		The RelFileLocator of a relation of this database from its pg_class
 *		row.
 */
static RelFileLocator
locator_of(Form_pg_class form)
{
	return locator_in_database(form->reltablespace, form->relfilenode);
}

/*
 * read_btree_ends
 *		The first and the last visible non-NULL key, in index order, of the
 *		btree at index_locator over the heap at heap_locator (both of the
 *		persistence permanent says, the key of type keytype: int2, int4 or
 *		int8), read by relfilenode with the transaction's snapshot.  Returns
 *		false when an end leaf holds none, or could not be read: the caller
 *		then asks an index scan.  The caller holds AccessShareLock on both;
 *		their files are released before returning (storage manager entries
 *		would otherwise stay to the end of the transaction on PostgreSQL 15
 *		and 16).
 */
static bool
read_btree_ends(RelFileLocator index_locator, RelFileLocator heap_locator,
				bool permanent, Oid keytype, int64 *first, int64 *last)
{
	int16		keylen = keytype == INT2OID ? 2 : keytype == INT4OID ? 4 : 8;
	Snapshot	snapshot;
	LeafEntry  *entries;
	bool		found;

	entries = palloc(sizeof(LeafEntry) * MaxTIDsPerBTreePage);
	snapshot = RegisterSnapshot(ActiveSnapshotSet() ? GetActiveSnapshot() :
								GetTransactionSnapshot());
	found = btree_end_value(index_locator, heap_locator, permanent, keylen,
							keytype, snapshot, ForwardScanDirection, entries,
							first) &&
		btree_end_value(index_locator, heap_locator, permanent, keylen,
						keytype, snapshot, BackwardScanDirection, entries,
						last);
	UnregisterSnapshot(snapshot);
	pfree(entries);

	smgrclose(storagelab_smgropen_shared(index_locator));
	smgrclose(storagelab_smgropen_shared(heap_locator));
	return found;
}

/*
 * index_bounds_without_relcache
 *		storagelab_index_bounds()'s answer for a btree index over an integer
 *		column of a heap table, without opening either.
 *
 * Takes AccessShareLock on the table and then the index without waiting
 * ("locked" otherwise), as the index scan's path does, and reads their
 * pg_class and pg_index rows from the syscache after the locks (which
 * processed invalidations: the relfilenodes are the committed ones, and
 * stay so under the locks: REINDEX, TRUNCATE, CLUSTER and VACUUM FULL
 * conflict).  Returns false, with no lock kept, when the caller must
 * answer through the index scan instead (see above); true with *status set
 * otherwise ("ok", "locked", "unavailable").  Every file it opened is
 * released before returning (storage manager entries would otherwise stay
 * to the end of the transaction on PostgreSQL 15 and 16).
 */
static bool
index_bounds_without_relcache(Oid indexid, Oid heapid, const char **status,
							  int64 *min_value, int64 *max_value)
{
	HeapTuple	tup;
	Form_pg_class form;
	RelFileLocator heap_locator;
	RelFileLocator index_locator = {0};
	char		heap_persistence;
	bool		eligible = true;
	bool		permanent;
	Oid			keytype = InvalidOid;
	bool		found;

	if (!ConditionalLockRelationOid(heapid, AccessShareLock))
	{
		*status = SL_STATUS_LOCKED;
		return true;
	}
	if (!ConditionalLockRelationOid(indexid, AccessShareLock))
	{
		UnlockRelationOid(heapid, AccessShareLock);
		*status = SL_STATUS_LOCKED;
		return true;
	}

	/* The table: a heap in shared buffers, readable here. */
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(heapid));
	if (!HeapTupleIsValid(tup))
	{
		UnlockRelationOid(indexid, AccessShareLock);
		UnlockRelationOid(heapid, AccessShareLock);
		*status = SL_STATUS_UNAVAILABLE;
		return true;
	}
	form = (Form_pg_class) GETSTRUCT(tup);
	heap_persistence = form->relpersistence;
	eligible = form->relam == HEAP_TABLE_AM_OID && OidIsValid(form->relfilenode) &&
		(heap_persistence == RELPERSISTENCE_PERMANENT ||
		 (heap_persistence == RELPERSISTENCE_UNLOGGED && !RecoveryInProgress()));
	heap_locator = locator_of(form);
	ReleaseSysCache(tup);

	/* The index: a btree of the same persistence, still this table's. */
	if (eligible)
	{
		tup = SearchSysCache1(RELOID, ObjectIdGetDatum(indexid));
		if (!HeapTupleIsValid(tup))
		{
			UnlockRelationOid(indexid, AccessShareLock);
			UnlockRelationOid(heapid, AccessShareLock);
			*status = SL_STATUS_UNAVAILABLE;
			return true;
		}
		form = (Form_pg_class) GETSTRUCT(tup);
		eligible = form->relkind == RELKIND_INDEX && form->relam == BTREE_AM_OID &&
			OidIsValid(form->relfilenode) && form->relpersistence == heap_persistence;
		index_locator = locator_of(form);
		ReleaseSysCache(tup);
	}
	if (eligible)
	{
		tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexid));
		eligible = HeapTupleIsValid(tup) &&
			((Form_pg_index) GETSTRUCT(tup))->indrelid == heapid &&
			((Form_pg_index) GETSTRUCT(tup))->indisvalid;
		if (HeapTupleIsValid(tup))
			ReleaseSysCache(tup);
	}
	if (eligible)
	{
		/* a domain key is stored as its base type */
		tup = SearchSysCache2(ATTNUM, ObjectIdGetDatum(indexid), Int16GetDatum(1));
		if (HeapTupleIsValid(tup))
		{
			keytype = getBaseType(((Form_pg_attribute) GETSTRUCT(tup))->atttypid);
			ReleaseSysCache(tup);
		}
		eligible = keytype == INT2OID || keytype == INT4OID || keytype == INT8OID;
	}
	if (!eligible)
	{
		UnlockRelationOid(indexid, AccessShareLock);
		UnlockRelationOid(heapid, AccessShareLock);
		return false;
	}

	permanent = heap_persistence == RELPERSISTENCE_PERMANENT;
	found = read_btree_ends(index_locator, heap_locator, permanent, keytype,
							min_value, max_value);

	UnlockRelationOid(indexid, AccessShareLock);
	UnlockRelationOid(heapid, AccessShareLock);
	if (found)
		*status = SL_STATUS_OK;
	return found;
}

/*
 * index_bounds_in_index_order
 *		storagelab_index_bounds(), but with the first and the last key in
 *		index order as *min_value and *max_value, and *descending set when
 *		the index's first column is DESC (its first key is then the
 *		largest).
 *
 * The smallest and largest visible non-NULL value of the first key column of
 * a btree index over an int2, int4 or int8 column, read from the two ends of
 * the index with the transaction's snapshot.  status: "ok", "empty" (no
 * non-NULL value), "approximate" (too many dead entries at an end; the
 * outermost key is returned), "unreadable" (the caller may SELECT neither
 * the table nor the column), "locked" (another session holds ACCESS
 * EXCLUSIVE on the table or the index; we do not wait), "unavailable"
 * (dropped meanwhile, not valid, another session's temporary table, an
 * unlogged table on a standby).
 *
 * Takes AccessShareLock on the table and the index conditionally and
 * releases both before returning.  Anything other than a btree index on an
 * integer first key column is an error.  Reads the ends without the
 * relation cache where it can (index_bounds_without_relcache()), else with
 * an index scan from each end (index_endpoint()); both give the same answer.
 */
static const char *
index_bounds_in_index_order(Oid indexid, bool *descending,
							int64 *min_value, int64 *max_value)
{
	const char *status = SL_STATUS_OK;
	Oid			heapid;
	HeapTuple	idxtup;
	Form_pg_index idxform;
	AttrNumber	keyattnum;
	bool		is_missing = false;
	Relation	heap;
	Relation	index;
	Oid			keytype;
	Snapshot	snapshot;
	int64		minv = 0;
	int64		maxv = 0;
	bool		approximate = false;
	bool		found;

	if (get_rel_relkind(indexid) == '\0')
		return SL_STATUS_UNAVAILABLE;

	idxtup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexid));
	if (!HeapTupleIsValid(idxtup) && get_rel_relkind(indexid) == '\0')
		return SL_STATUS_UNAVAILABLE;
	if (!HeapTupleIsValid(idxtup))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an index", get_rel_name(indexid)),
				 errhint("Pass a btree index whose first key column is an integer column.")));
	idxform = (Form_pg_index) GETSTRUCT(idxtup);
	heapid = idxform->indrelid;
	keyattnum = idxform->indkey.values[0];
	if (keyattnum != InvalidAttrNumber)
	{
		bool		isnull;
		Datum		d = SysCacheGetAttr(INDEXRELID, idxtup,
										Anum_pg_index_indoption, &isnull);

		*descending = !isnull &&
			(((int2vector *) DatumGetPointer(d))->values[0] & INDOPTION_DESC) != 0;
	}
	ReleaseSysCache(idxtup);

	if (keyattnum == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("index \"%s\" starts with an expression", get_rel_name(indexid)),
				 errhint("Pass a btree index whose first key column is an integer column.")));

	/*
	 * SELECT on the table, or on the key column (a column privilege is
	 * enough for "SELECT min(col)"), before any lock is requested.
	 */
	if (pg_class_aclcheck_ext(heapid, GetUserId(), ACL_SELECT, &is_missing) != ACLCHECK_OK &&
		(is_missing ||
		 pg_attribute_aclcheck_ext(heapid, keyattnum, GetUserId(), ACL_SELECT,
								   &is_missing) != ACLCHECK_OK))
		return is_missing ? SL_STATUS_UNAVAILABLE : SL_STATUS_UNREADABLE;

	/* Without the relation cache when the ends are plain to read. */
	if (index_bounds_without_relcache(indexid, heapid, &status,
									  min_value, max_value))
		return status;

	/* Otherwise through the relation cache, with an index scan. */
	heap = open_conditionally(heapid, &status);
	if (heap == NULL)
		return status;
	index = open_conditionally(indexid, &status);
	if (index == NULL)
	{
		relation_close(heap, AccessShareLock);
		return status;
	}

	if (index->rd_rel->relkind != RELKIND_INDEX ||
		index->rd_rel->relam != BTREE_AM_OID)
	{
		const char *name = pstrdup(RelationGetRelationName(index));

		relation_close(index, AccessShareLock);
		relation_close(heap, AccessShareLock);
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a btree index", name),
				 errdetail("Only a btree index returns its smallest and largest key cheaply."),
				 errhint("Pass a btree index whose first key column is an integer column.")));
	}
	keytype = getBaseType(TupleDescAttr(RelationGetDescr(index), 0)->atttypid);
	if (keytype != INT2OID && keytype != INT4OID && keytype != INT8OID)
	{
		const char *name = pstrdup(RelationGetRelationName(index));

		relation_close(index, AccessShareLock);
		relation_close(heap, AccessShareLock);
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("first key column of index \"%s\" is of type %s", name,
						format_type_be(keytype)),
				 errhint("Pass a btree index whose first key column is of type smallint, integer or bigint.")));
	}

	if (unreadable_on_this_server(heap) || !index->rd_index->indisvalid ||
		heap->rd_rel->relam != HEAP_TABLE_AM_OID)
	{
		relation_close(index, AccessShareLock);
		relation_close(heap, AccessShareLock);
		return SL_STATUS_UNAVAILABLE;
	}

	snapshot = RegisterSnapshot(ActiveSnapshotSet() ? GetActiveSnapshot() :
								GetTransactionSnapshot());
	found = index_endpoint(heap, index, snapshot, ForwardScanDirection,
						   &minv, &approximate);
	if (found)
		found = index_endpoint(heap, index, snapshot, BackwardScanDirection,
							   &maxv, &approximate);
	UnregisterSnapshot(snapshot);

	relation_close(index, AccessShareLock);
	relation_close(heap, AccessShareLock);

	if (!found)
		return SL_STATUS_EMPTY;

	*min_value = minv;
	*max_value = maxv;
	return approximate ? SL_STATUS_APPROXIMATE : SL_STATUS_OK;
}

/*
 * storagelab_index_bounds
 *		The smallest and largest visible non-NULL value of the first key
 *		column of a btree index over an integer column: see
 *		index_bounds_in_index_order(); a DESC index's ends are swapped back.
 */
const char *
storagelab_index_bounds(Oid indexid, int64 *min_value, int64 *max_value)
{
	bool		descending = false;
	int64		first = 0;
	int64		last = 0;
	const char *status;

	status = index_bounds_in_index_order(indexid, &descending, &first, &last);
	if (status == SL_STATUS_OK || status == SL_STATUS_APPROXIMATE)
	{
		*min_value = descending ? last : first;
		*max_value = descending ? first : last;
	}
	return status;
}

/*
 * storagelab_int_overflow_index_bounds
 *		SQL: storagelab_internal.int_overflow_index_bounds(index regclass,
 *			 OUT min_value bigint, OUT max_value bigint, OUT status text)
 *
 * storagelab_index_bounds() as a record; NULL values unless status is ok or
 * approximate.
 */
Datum
storagelab_int_overflow_index_bounds(PG_FUNCTION_ARGS)
{
	int64		minv = 0;
	int64		maxv = 0;
	const char *status;
	Datum		dmin;
	Datum		dmax;

	check_call(fcinfo, 1, INT8OID, "int_overflow_index_bounds");
	status = storagelab_index_bounds(PG_GETARG_OID(0), &minv, &maxv);
	if (status != SL_STATUS_OK && status != SL_STATUS_APPROXIMATE)
		PG_RETURN_DATUM(form_result(fcinfo, NULL, NULL, status));
	dmin = Int64GetDatum(minv);
	dmax = Int64GetDatum(maxv);
	PG_RETURN_DATUM(form_result(fcinfo, &dmin, &dmax, status));
}

/*
 * stats_slot_bounds
 *		Widen the range *minv .. *maxv by the values of one statistics slot of kind
 *		stakind (histogram or most common values) of the pg_statistic tuple.
 */
static void
stats_slot_bounds(HeapTuple statstup, int stakind,
				  bool *found, int64 *minv, int64 *maxv)
{
	AttStatsSlot sslot;
	Oid			valuetype;
	int			i;

	if (!get_attstatsslot(&sslot, statstup, stakind, InvalidOid,
						  ATTSTATSSLOT_VALUES))
		return;
	/* The values are of the column's type: a domain stores its base type. */
	valuetype = sslot.valuetype;
	if (valuetype != INT2OID && valuetype != INT4OID && valuetype != INT8OID)
		valuetype = getBaseType(valuetype);
	if (valuetype == INT2OID || valuetype == INT4OID || valuetype == INT8OID)
	{
		for (i = 0; i < sslot.nvalues; i++)
		{
			int64		v = int_key_to_int64(sslot.values[i], valuetype);

			if (!*found || v < *minv)
				*minv = v;
			if (!*found || v > *maxv)
				*maxv = v;
			*found = true;
		}
	}
	free_attstatsslot(&sslot);
}

/*
 * storagelab_stats_access
 *		Whether the caller may read the statistics of relid.attnum, by the
 *		rules of the pg_stats view: "ok", "unreadable" (no SELECT on the table
 *		or column, or row-level security active) or "unavailable" (dropped).
 *		*inherited says which statistics to try first: the whole tree's, for
 *		a parent (partitioned, or with inheritance children).
 */
const char *
storagelab_stats_access(Oid relid, AttrNumber attnum, bool *inherited)
{
	bool		is_missing = false;
	HeapTuple	classtup;
	Form_pg_class classform;
	bool		rowsecurity;

	classtup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(classtup))
		return SL_STATUS_UNAVAILABLE;
	classform = (Form_pg_class) GETSTRUCT(classtup);
	rowsecurity = classform->relrowsecurity;
	/* Whole-tree statistics exist only for parents; try them first there. */
	*inherited = classform->relkind == RELKIND_PARTITIONED_TABLE || classform->relhassubclass;
	ReleaseSysCache(classtup);

	/* The rules of the pg_stats view. */
	if ((pg_class_aclcheck_ext(relid, GetUserId(), ACL_SELECT, &is_missing) != ACLCHECK_OK &&
		 (is_missing ||
		  pg_attribute_aclcheck_ext(relid, attnum, GetUserId(), ACL_SELECT,
									&is_missing) != ACLCHECK_OK)) ||
		(rowsecurity && check_enable_rls(relid, InvalidOid, true) == RLS_ENABLED))
		return is_missing ? SL_STATUS_UNAVAILABLE : SL_STATUS_UNREADABLE;
	return SL_STATUS_OK;
}

/*
 * storagelab_stats_tuple_bounds
 *		The smallest and largest integer value in the histogram and most
 *		common values of one pg_statistic row; false when it has none.
 */
bool
storagelab_stats_tuple_bounds(HeapTuple statstup, int64 *min_value,
							  int64 *max_value)
{
	bool		found = false;
	int64		minv = 0;
	int64		maxv = 0;

	stats_slot_bounds(statstup, STATISTIC_KIND_HISTOGRAM, &found, &minv, &maxv);
	stats_slot_bounds(statstup, STATISTIC_KIND_MCV, &found, &minv, &maxv);
	if (found)
	{
		*min_value = minv;
		*max_value = maxv;
	}
	return found;
}

/*
 * storagelab_stats_bounds
 *		The smallest and largest value ANALYZE saw in an int2/int4/int8 column:
 * the ends of its histogram and its most common values, from the
 * statistics over the whole inheritance tree when there are such (a
 * partitioned or inheritance parent), else from the table's own.  status:
 * "ok", "no statistics" (none, or not of an integer type), or "unreadable"
 * when pg_stats would hide the row (no SELECT on the table or column, or
 * row-level security active).  An
 * estimate: ANALYZE samples, and the table may have grown since.
 *
 * Reads pg_statistic through the syscache; takes no lock on the table.  The
 * view reads pg_statistic once for all columns instead (see
 * int_overflow_measure.c), with the same access rules.
 */
const char *
storagelab_stats_bounds(Oid relid, AttrNumber attnum,
						int64 *min_value, int64 *max_value)
{
	bool		inherited;
	HeapTuple	statstup;
	const char *status;
	bool		found;

	status = storagelab_stats_access(relid, attnum, &inherited);
	if (status != SL_STATUS_OK)
		return status;

	statstup = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(relid),
							   Int16GetDatum(attnum), BoolGetDatum(inherited));
	if (!HeapTupleIsValid(statstup) && inherited)
		statstup = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(relid),
								   Int16GetDatum(attnum), BoolGetDatum(false));
	if (!HeapTupleIsValid(statstup))
		return SL_STATUS_NO_STATISTICS;

	found = storagelab_stats_tuple_bounds(statstup, min_value, max_value);
	ReleaseSysCache(statstup);
	return found ? SL_STATUS_OK : SL_STATUS_NO_STATISTICS;
}

/*
 * storagelab_int_overflow_stats_bounds
 *		SQL: storagelab_internal.int_overflow_stats_bounds(rel regclass, attnum smallint,
 *			 OUT min_value bigint, OUT max_value bigint, OUT status text)
 *
 * storagelab_stats_bounds() as a record; NULL values unless status is ok.
 */
Datum
storagelab_int_overflow_stats_bounds(PG_FUNCTION_ARGS)
{
	int64		minv = 0;
	int64		maxv = 0;
	const char *status;
	Datum		dmin;
	Datum		dmax;

	check_call(fcinfo, 2, INT8OID, "int_overflow_stats_bounds");
	status = storagelab_stats_bounds(PG_GETARG_OID(0), PG_GETARG_INT16(1),
									 &minv, &maxv);
	if (status != SL_STATUS_OK)
		PG_RETURN_DATUM(form_result(fcinfo, NULL, NULL, status));
	dmin = Int64GetDatum(minv);
	dmax = Int64GetDatum(maxv);
	PG_RETURN_DATUM(form_result(fcinfo, &dmin, &dmax, status));
}

/*
 * The view's probes: the same answers as the functions above, from the
 * pg_class rows the catalog walk has read (SlClass, SlIndex) instead of
 * catalog-cache lookups.  The catalog cache keeps every entry it loads to
 * the end of the session: one pg_class row per table, sequence and index of
 * a large database was 130 MB at 100,000 tables.
 *
 * The walk's rows are those of its catalog snapshot.  A probe that locks a
 * relation uses them unless an invalidation of them has arrived since the
 * walk: a transaction that changed a relation's row sends its messages
 * before releasing its lock, and taking our lock processes them.  No message
 * at all since the walk (read_at, SharedInvalidMessageCounter before it) is
 * the common case; otherwise the pg_class and pg_index rows invalidated
 * since the walk are known by their catalog-cache hash values (a syscache
 * callback, storagelab_class_watch_begin()), so that the invalidations of
 * other relations (autovacuum's statistics updates of pg_class, DDL
 * elsewhere) do not count.  A probe whose rows were invalidated reads the
 * row again (a sequence: by index scan, no cache entry) or answers as above
 * (an index).
 */

/*
 * The pg_class (RELOID) and pg_index (INDEXRELID) rows invalidated since
 * storagelab_class_watch_begin(): (cache id, hash value) pairs, up to
 * SL_MAX_CLASS_INVALS; beyond that, or after a cache reset, every row counts
 * as invalidated.
 */
#define SL_MAX_CLASS_INVALS 256
static bool class_watch_registered = false;
static int	n_class_invals = 0;
static bool class_invals_overflow = false;
static uint64 class_invals[SL_MAX_CLASS_INVALS];

/*
 * class_inval_callback
 *		Syscache callback of RELOID and INDEXRELID: note the row's hash
 *		value (0: the whole cache, after a reset).
 */
static void
class_inval_callback(Datum arg, int cacheid, uint32 hashvalue)
{
	if (hashvalue == 0 || n_class_invals >= SL_MAX_CLASS_INVALS)
		class_invals_overflow = true;
	else
		class_invals[n_class_invals++] = ((uint64) cacheid << 32) | hashvalue;
}

/*
 * storagelab_class_watch_begin
 *		Start noting the pg_class and pg_index rows invalidated from now on
 *		(the callbacks are registered once per backend: they cannot be
 *		removed).  The walk calls it before it reads pg_class.
 */
void
storagelab_class_watch_begin(void)
{
	if (!class_watch_registered)
	{
		CacheRegisterSyscacheCallback(RELOID, class_inval_callback, (Datum) 0);
		CacheRegisterSyscacheCallback(INDEXRELID, class_inval_callback, (Datum) 0);
		class_watch_registered = true;
	}
	n_class_invals = 0;
	class_invals_overflow = false;
}

/*
 * row_invalidated
 *		Whether the row of key in syscache cacheid was invalidated since
 *		storagelab_class_watch_begin() (or may have been).
 */
static bool
row_invalidated(int cacheid, Oid key)
{
	uint64		want;
	int			i;

	if (class_invals_overflow)
		return true;
	if (n_class_invals == 0)
		return false;
	want = ((uint64) cacheid << 32) |
		GetSysCacheHashValue1(cacheid, ObjectIdGetDatum(key));
	for (i = 0; i < n_class_invals; i++)
	{
		if (class_invals[i] == want)
			return true;
	}
	return false;
}

/*
 * storagelab_class_from_tuple
 *		Fill c from a pg_class tuple (desc: pg_class's tuple descriptor); a
 *		non-NULL relacl is copied into the current memory context.
 */
void
storagelab_class_from_tuple(SlClass *c, HeapTuple classtup, TupleDesc desc)
{
	Form_pg_class form = (Form_pg_class) GETSTRUCT(classtup);
	bool		isnull;
	Datum		d;

	c->relid = form->oid;
	c->relowner = form->relowner;
	c->relnamespace = form->relnamespace;
	c->relfilenode = form->relfilenode;
	c->reltablespace = form->reltablespace;
	c->relam = form->relam;
	c->relkind = form->relkind;
	c->relpersistence = form->relpersistence;
	c->relrowsecurity = form->relrowsecurity;
	c->relhassubclass = form->relhassubclass;
	c->reltuples = form->reltuples;
	d = heap_getattr(classtup, Anum_pg_class_relacl, desc, &isnull);
	c->relacl = isnull ? NULL : DatumGetAclPCopy(d);
}

/*
 * class_reread
 *		The pg_class row of relid as it is now (after a lock, which processed
 *		invalidations), by an index scan of pg_class under the catalog
 *		snapshot: no catalog-cache entry.  False when it is gone.
 */
static bool
class_reread(Oid relid, SlClass *out)
{
	Relation	catalog = table_open(RelationRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	bool		found;

	ScanKeyInit(&key, Anum_pg_class_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(relid));
	scan = systable_beginscan(catalog, ClassOidIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	found = HeapTupleIsValid(tup);
	if (found)
		storagelab_class_from_tuple(out, tup, RelationGetDescr(catalog));
	systable_endscan(scan);
	table_close(catalog, AccessShareLock);
	return found;
}

/*
 * storagelab_class_allows
 *		Whether the current user holds any privilege of mode on relation c:
 *		pg_class_aclcheck()'s rules (superuser, the ACL or the owner's
 *		default one, role membership through aclmask(), pg_read_all_data for
 *		SELECT) on the walk's row.  Relations with a system OID, where
 *		PostgreSQL restricts some rights further, are left to
 *		pg_class_aclcheck_ext().
 */
bool
storagelab_class_allows(const SlClass *c, AclMode mode)
{
	Oid			roleid = GetUserId();
	Acl		   *acl;
	AclMode		result;

	if (c->relid < FirstNormalObjectId)
	{
		bool		is_missing = false;

		return pg_class_aclcheck_ext(c->relid, roleid, mode, &is_missing) == ACLCHECK_OK;
	}
	if (superuser_arg(roleid))
		return true;
	acl = c->relacl != NULL ? c->relacl :
		acldefault(c->relkind == RELKIND_SEQUENCE ? OBJECT_SEQUENCE : OBJECT_TABLE,
				   c->relowner);
	result = aclmask(acl, roleid, c->relowner, mode, ACLMASK_ANY);
	if (acl != c->relacl)
		pfree(acl);
	if (result == 0 && (mode & ACL_SELECT) != 0 &&
		has_privs_of_role(roleid, ROLE_PG_READ_ALL_DATA))
		result = ACL_SELECT;
	return result != 0;
}

/*
 * storagelab_column_allows
 *		Whether the current user holds any privilege of mode on a column of
 *		relation c whose attacl the walk read (NULL: none granted on the
 *		column), by pg_attribute_aclcheck()'s rules.
 */
bool
storagelab_column_allows(const SlClass *c, const Acl *attacl, AclMode mode)
{
	if (attacl == NULL)
		return false;
	return aclmask(attacl, GetUserId(), c->relowner, mode, ACLMASK_ANY) != 0;
}

/*
 * sequence_readable
 *		storagelab_sequence_state()'s privilege rule on the row c: SELECT or
 *		USAGE on the sequence, or the privileges of pg_read_all_stats.
 */
static bool
sequence_readable(const SlClass *c)
{
	return storagelab_class_allows(c, ACL_SELECT | ACL_USAGE) ||
		has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
}

/*
 * storagelab_sequence_state_known
 *		storagelab_sequence_state() of the sequence whose pg_class row the
 *		walk read as seq (before read_at), with the same statuses, lock and
 *		rules, and no catalog-cache lookup while no invalidation arrived.
 *		The session's own temporary sequences go through
 *		storagelab_sequence_state().
 */
const char *
storagelab_sequence_state_known(const SlClass *seq, uint64 read_at,
								int64 *last_value, bool *is_called)
{
	SlClass		cur = *seq;
	RelFileLocator locator;

	if (seq->relid < FirstNormalObjectId ||
		seq->relpersistence == RELPERSISTENCE_TEMP)
		return storagelab_sequence_state(seq->relid, true, last_value, is_called);

	/* Privileges before the lock, as storagelab_sequence_state() does. */
	if (!sequence_readable(seq))
		return SL_STATUS_UNREADABLE;
	if (!ConditionalLockRelationOid(seq->relid, SEQUENCE_READ_LOCK))
		return SL_STATUS_LOCKED;
	if (SharedInvalidMessageCounter != read_at &&
		(!class_watch_registered || row_invalidated(RELOID, seq->relid)))
	{
		/* Its row changed since the walk: the committed row, checked again. */
		if (!class_reread(seq->relid, &cur))
		{
			UnlockRelationOid(seq->relid, SEQUENCE_READ_LOCK);
			return SL_STATUS_UNAVAILABLE;
		}
		if (!sequence_readable(&cur))
		{
			UnlockRelationOid(seq->relid, SEQUENCE_READ_LOCK);
			return SL_STATUS_UNREADABLE;
		}
	}

	if (cur.relkind != RELKIND_SEQUENCE || !OidIsValid(cur.relfilenode) ||
		cur.relpersistence == RELPERSISTENCE_TEMP ||
		(cur.relpersistence == RELPERSISTENCE_UNLOGGED && RecoveryInProgress()))
	{
		UnlockRelationOid(seq->relid, SEQUENCE_READ_LOCK);
		if (cur.relkind == RELKIND_SEQUENCE &&
			cur.relpersistence == RELPERSISTENCE_TEMP)
			return storagelab_sequence_state(seq->relid, true, last_value, is_called);
		return SL_STATUS_UNAVAILABLE;
	}

	locator = locator_in_database(cur.reltablespace, cur.relfilenode);
	read_sequence_tuple(ReadBufferWithoutRelcache(locator, MAIN_FORKNUM, 0,
												  RBM_NORMAL, NULL,
												  cur.relpersistence == RELPERSISTENCE_PERMANENT),
						seq->relid, last_value, is_called);
	smgrclose(storagelab_smgropen_shared(locator));
	UnlockRelationOid(seq->relid, SEQUENCE_READ_LOCK);
	return SL_STATUS_OK;
}

/*
 * storagelab_index_bounds_known
 *		storagelab_index_bounds() of the btree index whose rows the walk read
 *		as index, leading with a column of heap (column ACL attacl, integer
 *		base type keytype): the same statuses, locks and privilege rules,
 *		with no catalog-cache lookup when both ends are read by relfilenode
 *		and none of their rows was invalidated since the walk.  Otherwise
 *		(another kind of table, a temporary or changed one, an end without a
 *		visible entry) it answers through storagelab_index_bounds().
 */
const char *
storagelab_index_bounds_known(const SlClass *heap, const Acl *attacl,
							  Oid keytype,
							  const SlIndex *index, uint64 read_at,
							  int64 *min_value, int64 *max_value)
{
	RelFileLocator heap_locator;
	RelFileLocator index_locator;
	int64		first = 0;
	int64		last = 0;
	bool		found;

	/* SELECT on the table or on the key column, before any lock. */
	if (heap->relid >= FirstNormalObjectId &&
		!storagelab_class_allows(heap, ACL_SELECT) &&
		!storagelab_column_allows(heap, attacl, ACL_SELECT))
		return SL_STATUS_UNREADABLE;

	if (heap->relid < FirstNormalObjectId ||
		heap->relam != HEAP_TABLE_AM_OID || !OidIsValid(heap->relfilenode) ||
		!OidIsValid(index->relfilenode) ||
		index->relpersistence != heap->relpersistence ||
		!(heap->relpersistence == RELPERSISTENCE_PERMANENT ||
		  (heap->relpersistence == RELPERSISTENCE_UNLOGGED && !RecoveryInProgress())) ||
		!(keytype == INT2OID || keytype == INT4OID || keytype == INT8OID))
		return storagelab_index_bounds(index->relid, min_value, max_value);

	if (!ConditionalLockRelationOid(heap->relid, AccessShareLock))
		return SL_STATUS_LOCKED;
	if (!ConditionalLockRelationOid(index->relid, AccessShareLock))
	{
		UnlockRelationOid(heap->relid, AccessShareLock);
		return SL_STATUS_LOCKED;
	}
	found = SharedInvalidMessageCounter == read_at ||
		(class_watch_registered &&
		 !row_invalidated(RELOID, heap->relid) &&
		 !row_invalidated(RELOID, index->relid) &&
		 !row_invalidated(INDEXRELID, index->relid));
	if (found)
	{
		heap_locator = locator_in_database(heap->reltablespace, heap->relfilenode);
		index_locator = locator_in_database(index->reltablespace, index->relfilenode);
		found = read_btree_ends(index_locator, heap_locator,
								heap->relpersistence == RELPERSISTENCE_PERMANENT,
								keytype, &first, &last);
	}
	UnlockRelationOid(index->relid, AccessShareLock);
	UnlockRelationOid(heap->relid, AccessShareLock);
	if (!found)
		return storagelab_index_bounds(index->relid, min_value, max_value);
	*min_value = index->descending ? last : first;
	*max_value = index->descending ? first : last;
	return SL_STATUS_OK;
}

/*
 * storagelab_stats_access_known
 *		storagelab_stats_access() on the walk's row of the table (rel) and
 *		the column's ACL (attacl): "ok" or "unreadable", by the rules of the
 *		pg_stats view, and *inherited the same.
 */
const char *
storagelab_stats_access_known(const SlClass *rel, const Acl *attacl,
							  bool *inherited)
{
	*inherited = rel->relkind == RELKIND_PARTITIONED_TABLE || rel->relhassubclass;
	if ((!storagelab_class_allows(rel, ACL_SELECT) &&
		 !storagelab_column_allows(rel, attacl, ACL_SELECT)) ||
		(rel->relrowsecurity &&
		 check_enable_rls(rel->relid, InvalidOid, true) == RLS_ENABLED))
		return SL_STATUS_UNREADABLE;
	return SL_STATUS_OK;
}
