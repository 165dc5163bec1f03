/*-------------------------------------------------------------------------
 *
 * heap_visibility.c
 *	  Hint-bit, freeze and visibility-map state of a heap relation, read
 *	  from its pages without changing them.
 *
 * Backs the SQL functions
 *	  storagelab.heap_visibility(relation regclass, sample_pages integer)
 *	  storagelab.heap_visibility_toast(relation regclass, sample_pages integer)
 *
 * Every page is read through a BAS_BULKREAD ring under a share lock, and
 * classified from the tuple headers' t_infomask alone.  Whether a tuple
 * carries hint-bit debt (an xmin or xmax whose transaction has ended but
 * whose hint bit is not set yet) is decided from the transaction's status
 * (TransactionIdIsInProgress, TransactionIdDidCommit), the way
 * HeapTupleSatisfiesMVCC would decide it, but nothing is ever set: no
 * HeapTupleSatisfies* call, no SetHintBits, no pruning, no dirtied buffer.
 *
 * hint_debt_pages predicts the "dirtied" buffers of a sequential scan run
 * now: a page is dirtied by such a scan when heap_page_prune_opt() would
 * prune it, or when it is not all-visible (outside recovery, a scan trusts
 * PD_ALL_VISIBLE and checks no tuple) and one of its tuples would get a hint
 * bit; a buffer that is already dirty is not dirtied again.
 *
 * Sampling and the confidence intervals are in visibility_estimate.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/transam.h"
#include "access/visibilitymap.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xlogrecord.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "commands/vacuum.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/buf_internals.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "storage/procarray.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/sampling.h"
#include "utils/snapmgr.h"

#include "compat.h"
#include "heap_visibility.h"
#include "storagelab.h"

PG_FUNCTION_INFO_V1(storagelab_heap_visibility);
PG_FUNCTION_INFO_V1(storagelab_heap_visibility_toast);

/* Seed of the page sample: the same relation gives the same sample. */
#define HV_SAMPLE_SEED	0x5eed

/* What a reader would learn about a transaction now. */
typedef enum HvXidStatus
{
	HV_XID_UNKNOWN,				/* out of the range clog can answer for */
	HV_XID_IN_PROGRESS,			/* running, or the caller's own */
	HV_XID_COMMITTED,
	HV_XID_ABORTED				/* aborted or crashed */
} HvXidStatus;

/* State of one heap_visibility() call. */
typedef struct HvScan
{
	/* for the whole call */
	BufferAccessStrategy strategy;
	MemoryContext pagecxt;		/* reset after every page */
	bool		in_recovery;	/* scans then check every tuple, never prune */
	bool		hints_dirty;	/* a hint bit dirties the buffer */
	bool		hints_logged;	/* ... and logs a full-page image */
	XLogRecPtr	redo;			/* redo pointer of the last checkpoint */
	TransactionId next_xid;
	TransactionId oldest_clog_xid;
	TransactionId oldest_unfrozen;	/* oldest xid still to freeze */
	uint64		all_visible_pages;
	uint64		all_frozen_pages;
	HvEstimate	est;

	/* for the relation being read */
	Relation	rel;
	bool		permanent;
	TransactionId relfrozenxid;
	GlobalVisState *vistest;
	Size		prune_minfree;
	Buffer		vmbuffer;
	TransactionId cached_xid;
	HvXidStatus cached_status;
} HvScan;

/*
 * hv_xid_status
 *		Status of xid as a reader would see it now, without setting anything.
 *
 * Xids older than the oldest one clog still holds, older than the
 * relation's relfrozenxid, or not yet assigned are UNKNOWN: a healthy table
 * has no unhinted xid there, and clog must not be asked about them.
 */
static HvXidStatus
hv_xid_status(HvScan *scan, TransactionId xid)
{
	HvXidStatus status;

	if (!TransactionIdIsValid(xid))
		return HV_XID_UNKNOWN;
	if (!TransactionIdIsNormal(xid))
		return HV_XID_COMMITTED;	/* bootstrap and frozen xids */
	if (TransactionIdEquals(xid, scan->cached_xid))
		return scan->cached_status;

	if (TransactionIdPrecedes(xid, scan->oldest_clog_xid) ||
		(TransactionIdIsNormal(scan->relfrozenxid) &&
		 TransactionIdPrecedes(xid, scan->relfrozenxid)) ||
		!TransactionIdPrecedes(xid, scan->next_xid))
		status = HV_XID_UNKNOWN;
	else if (TransactionIdIsInProgress(xid))
		status = HV_XID_IN_PROGRESS;
	else if (TransactionIdDidCommit(xid))
		status = HV_XID_COMMITTED;
	else
		status = HV_XID_ABORTED;

	scan->cached_xid = xid;
	scan->cached_status = status;
	return status;
}

/*
 * hv_would_hint_committed
 *		Whether SetHintBits() would set a COMMITTED bit for committed xid on
 *		this buffer: not while the commit record of an asynchronous commit is
 *		not flushed and the page's LSN does not interlock it.
 */
static bool
hv_would_hint_committed(HvScan *scan, Buffer buffer, TransactionId xid)
{
	XLogRecPtr	commit_lsn;

	if (!scan->permanent)
		return true;
	commit_lsn = TransactionIdGetCommitLSN(xid);
	return !(XLogNeedsFlush(commit_lsn) &&
			 BufferGetLSNAtomic(buffer) < commit_lsn);
}

/*
 * hv_note_unfrozen
 *		Remember xid if it is the oldest normal xid still to be frozen.
 */
static void
hv_note_unfrozen(HvScan *scan, TransactionId xid)
{
	if (!TransactionIdIsNormal(xid))
		return;
	if (!TransactionIdIsValid(scan->oldest_unfrozen) ||
		TransactionIdPrecedes(xid, scan->oldest_unfrozen))
		scan->oldest_unfrozen = xid;
}

/*
 * hv_tuple_has_debt
 *		Whether an MVCC visibility check done now would set a hint bit on
 *		this tuple (HeapTupleSatisfiesMVCC's order of tests, read-only).
 *
 * An unhinted xmin that committed gets XMIN_COMMITTED, one that aborted
 * XMIN_INVALID (and the tuple is invisible, so xmax is not looked at).  For
 * a visible tuple, a plain (not multixact, not lock-only) unhinted xmax gets
 * XMAX_COMMITTED or XMAX_INVALID once its transaction has ended; lock-only
 * and multixact xmax are never hinted by an MVCC check.
 */
static bool
hv_tuple_has_debt(HvScan *scan, Buffer buffer, HeapTupleHeader tup)
{
	uint16		infomask = tup->t_infomask;
	bool		debt = false;
	TransactionId xmax;

	if (!(infomask & HEAP_XMIN_COMMITTED))
	{
		TransactionId xmin = HeapTupleHeaderGetRawXmin(tup);

		if (infomask & HEAP_XMIN_INVALID)
			return false;
		switch (hv_xid_status(scan, xmin))
		{
			case HV_XID_COMMITTED:
				debt = hv_would_hint_committed(scan, buffer, xmin);
				break;			/* visible: go on to xmax */
			case HV_XID_ABORTED:
				return true;	/* gets XMIN_INVALID, invisible */
			default:
				return false;	/* in progress or unknown: no hint */
		}
	}

	if (infomask & (HEAP_XMAX_INVALID | HEAP_XMAX_COMMITTED | HEAP_XMAX_IS_MULTI))
		return debt;
	if (HEAP_XMAX_IS_LOCKED_ONLY(infomask))
		return debt;

	xmax = HeapTupleHeaderGetRawXmax(tup);
	if (!TransactionIdIsValid(xmax))
		return true;			/* clog calls xid 0 aborted: XMAX_INVALID */
	switch (hv_xid_status(scan, xmax))
	{
		case HV_XID_COMMITTED:
			return debt || hv_would_hint_committed(scan, buffer, xmax);
		case HV_XID_ABORTED:
			return true;
		default:
			return debt;
	}
}

/*
 * hv_tuple_is_deleted
 *		Whether a tuple inserted by a committed transaction was deleted or
 *		updated by a committed transaction (plain xmax, hinted or not; a
 *		multixact xmax is not resolved here).
 */
static bool
hv_tuple_is_deleted(HvScan *scan, HeapTupleHeader tup)
{
	uint16		infomask = tup->t_infomask;

	if (!(infomask & HEAP_XMIN_COMMITTED) &&
		((infomask & HEAP_XMIN_INVALID) ||
		 hv_xid_status(scan, HeapTupleHeaderGetRawXmin(tup)) != HV_XID_COMMITTED))
		return false;
	if (infomask & (HEAP_XMAX_INVALID | HEAP_XMAX_IS_MULTI))
		return false;
	if (HEAP_XMAX_IS_LOCKED_ONLY(infomask))
		return false;
	if (infomask & HEAP_XMAX_COMMITTED)
		return true;
	return hv_xid_status(scan, HeapTupleHeaderGetRawXmax(tup)) == HV_XID_COMMITTED;
}

/*
 * hv_would_prune
 *		Whether heap_page_prune_opt(), which a sequential scan calls on every
 *		page, would prune this page now (and so dirty it): a prunable xid that
 *		is removable for everyone, and less free space than the fillfactor's
 *		target or 10% of the page.
 */
static bool
hv_would_prune(HvScan *scan, Page page)
{
	TransactionId prune_xid = ((PageHeader) page)->pd_prune_xid;

	if (scan->in_recovery || !TransactionIdIsNormal(prune_xid))
		return false;
	if (!GlobalVisTestIsRemovableXid(scan->vistest, prune_xid))
		return false;
	return PageIsFull(page) || PageGetHeapFreeSpace(page) < scan->prune_minfree;
}

/*
 * hv_buffer_is_dirty
 *		Whether the buffer is dirty already (a read would not dirty it again).
 */
static bool
hv_buffer_is_dirty(Buffer buffer)
{
	BufferDesc *hdr;

	if (BufferIsLocal(buffer))
		hdr = GetLocalBufferDescriptor(-buffer - 1);
	else
		hdr = GetBufferDescriptor(buffer - 1);
	return (pg_atomic_read_u32(&hdr->state) & BM_DIRTY) != 0;
}

/*
 * hv_fpi_bytes
 *		WAL bytes of the full-page image XLogSaveBufferForHint() would write
 *		for this page: record and block headers plus the page without the
 *		hole between pd_lower and pd_upper (before any wal_compression), and
 *		its share of WAL page headers.
 */
static double
hv_fpi_bytes(Page page)
{
	PageHeader	ph = (PageHeader) page;
	Size		hole = 0;
	Size		len;

	if (ph->pd_lower >= SizeOfPageHeaderData &&
		ph->pd_lower < ph->pd_upper && ph->pd_upper <= BLCKSZ)
		hole = ph->pd_upper - ph->pd_lower;
	len = SizeOfXLogRecord + SizeOfXLogRecordBlockHeader +
		SizeOfXLogRecordBlockImageHeader +
		3 * sizeof(Oid) +		/* the relation's file locator */
		sizeof(BlockNumber) + BLCKSZ - hole;
	/* plus the share of the WAL page headers such a record spans */
	return (double) MAXALIGN(len) * XLOG_BLCKSZ / (XLOG_BLCKSZ - SizeOfXLogShortPHD);
}

/*
 * hv_read_page
 *		Read block blkno of scan->rel under a share lock and add its counts
 *		to stratum.  Never modifies the page or its buffer.
 */
static void
hv_read_page(HvScan *scan, BlockNumber blkno, HvStratum *stratum)
{
	double		fig[HV_NUM_FIGURES] = {0};
	Buffer		buffer;
	Page		page;
	uint8		vmstatus;
	int			items = 0;

	buffer = ReadBufferExtended(scan->rel, MAIN_FORKNUM, blkno, RBM_NORMAL,
								scan->strategy);
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buffer);

	/*
	 * Heap changes clear the VM bit under an exclusive lock on the heap
	 * page, so with the share lock held the two agree unless something is
	 * wrong.
	 */
	vmstatus = visibilitymap_get_status(scan->rel, blkno, &scan->vmbuffer);

	if (!PageIsNew(page))
	{
		bool		all_visible = PageIsAllVisible(page);
		OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
		OffsetNumber off;
		int			debt_tuples = 0;
		bool		dirties;

		if (all_visible != ((vmstatus & VISIBILITYMAP_ALL_VISIBLE) != 0))
			fig[HV_PD_ALL_VISIBLE_MISMATCHES] = 1;

		if (maxoff > MaxHeapTuplesPerPage)
			maxoff = InvalidOffsetNumber;	/* damaged header: no items */
		items = maxoff;

		for (off = FirstOffsetNumber; off <= maxoff; off = OffsetNumberNext(off))
		{
			ItemId		lp = PageGetItemId(page, off);
			HeapTupleHeader tup;
			uint16		infomask;

			switch (ItemIdGetFlags(lp))
			{
				case LP_UNUSED:
					fig[HV_UNUSED_ITEMS]++;
					continue;
				case LP_DEAD:
					fig[HV_DEAD_ITEMS]++;
					continue;
				case LP_REDIRECT:
					fig[HV_REDIRECT_ITEMS]++;
					continue;
				default:
					break;
			}

			fig[HV_TUPLES]++;
			if (ItemIdGetOffset(lp) < SizeOfPageHeaderData ||
				ItemIdGetLength(lp) < SizeofHeapTupleHeader ||
				ItemIdGetOffset(lp) + ItemIdGetLength(lp) > BLCKSZ)
				continue;		/* damaged line pointer: not classified */

			tup = (HeapTupleHeader) PageGetItem(page, lp);
			infomask = tup->t_infomask;

			if ((infomask & HEAP_XMIN_FROZEN) == HEAP_XMIN_FROZEN)
				fig[HV_XMIN_FROZEN]++;
			else if (infomask & HEAP_XMIN_COMMITTED)
				fig[HV_XMIN_COMMITTED]++;
			else if (infomask & HEAP_XMIN_INVALID)
				fig[HV_XMIN_INVALID]++;
			else
				fig[HV_XMIN_UNHINTED]++;
			if (infomask & HEAP_XMAX_COMMITTED)
				fig[HV_XMAX_COMMITTED]++;
			if (infomask & HEAP_XMAX_INVALID)
				fig[HV_XMAX_INVALID]++;

			/* Freeze debt: xids the next aggressive VACUUM must process. */
			if ((infomask & HEAP_XMIN_FROZEN) != HEAP_XMIN_FROZEN &&
				(infomask & HEAP_XMIN_FROZEN) != HEAP_XMIN_INVALID)
				hv_note_unfrozen(scan, HeapTupleHeaderGetRawXmin(tup));
			if (!(infomask & (HEAP_XMAX_INVALID | HEAP_XMAX_IS_MULTI)))
				hv_note_unfrozen(scan, HeapTupleHeaderGetRawXmax(tup));

			if (hv_tuple_has_debt(scan, buffer, tup))
				debt_tuples++;
			if (hv_tuple_is_deleted(scan, tup))
				fig[HV_DELETED_TUPLES]++;
		}
		fig[HV_HINT_DEBT_TUPLES] = debt_tuples;

		/*
		 * What a sequential scan would do to this page: prune it, or check
		 * its tuples (all of them unless the page is all-visible and we are
		 * not in recovery) and set the hint bits found above.
		 */
		dirties = hv_would_prune(scan, page) ||
			(debt_tuples > 0 && scan->hints_dirty &&
			 (scan->in_recovery || !all_visible));
		if (dirties && !hv_buffer_is_dirty(buffer))
		{
			fig[HV_HINT_DEBT_PAGES] = 1;
			if (scan->hints_logged && scan->permanent &&
				PageGetLSN(page) <= scan->redo)
				fig[HV_HINT_DEBT_WAL_BYTES] = hv_fpi_bytes(page);
		}
	}

	UnlockReleaseBuffer(buffer);
	hv_stratum_add_page(stratum, fig, items);
}

/*
 * hv_read_relation
 *		Read rel in full, or a sample of sample_pages pages of it, and add it
 *		to the estimate as one stratum.  The relation stays open and locked
 *		by the caller.
 */
static void
hv_read_relation(HvScan *scan, Relation rel, BlockNumber nblocks,
				 int sample_pages)
{
	HvStratum	stratum;
	BlockNumber all_visible = 0;
	BlockNumber all_frozen = 0;
	MemoryContext oldcxt;

	memset(&stratum, 0, sizeof(stratum));
	stratum.pages = nblocks;

	scan->rel = rel;
	scan->permanent = rel->rd_rel->relpersistence == RELPERSISTENCE_PERMANENT;
	scan->relfrozenxid = rel->rd_rel->relfrozenxid;
	scan->vistest = GlobalVisTestFor(rel);
	scan->prune_minfree = Max(RelationGetTargetPageFreeSpace(rel, HEAP_DEFAULT_FILLFACTOR),
							  BLCKSZ / 10);
	scan->vmbuffer = InvalidBuffer;
	scan->cached_xid = InvalidTransactionId;

	/* The visibility map is small: count it whole, even for a sample. */
	if (nblocks > 0)
		visibilitymap_count(rel, &all_visible, &all_frozen);
	scan->all_visible_pages += all_visible;
	scan->all_frozen_pages += all_frozen;

	oldcxt = MemoryContextSwitchTo(scan->pagecxt);
	if (sample_pages <= 0 || (BlockNumber) sample_pages >= nblocks)
	{
		BlockNumber blkno;

		for (blkno = 0; blkno < nblocks; blkno++)
		{
			CHECK_FOR_INTERRUPTS();
			hv_read_page(scan, blkno, &stratum);
			MemoryContextReset(scan->pagecxt);
		}
	}
	else
	{
		BlockSamplerData bs;
		HvStratum	last;

		/*
		 * The last page, usually the only partly filled one, is read exactly
		 * as a stratum of its own; the sample is drawn from the others.
		 */
		memset(&last, 0, sizeof(last));
		last.pages = 1;
		stratum.pages = nblocks - 1;
		(void) BlockSampler_Init(&bs, nblocks - 1, sample_pages - 1, HV_SAMPLE_SEED);
		while (BlockSampler_HasMore(&bs))
		{
			BlockNumber blkno = BlockSampler_Next(&bs);

			CHECK_FOR_INTERRUPTS();
			hv_read_page(scan, blkno, &stratum);
			MemoryContextReset(scan->pagecxt);
		}
		CHECK_FOR_INTERRUPTS();
		hv_read_page(scan, nblocks - 1, &last);
		MemoryContextReset(scan->pagecxt);
		hv_estimate_add_stratum(&scan->est, &last);
	}
	MemoryContextSwitchTo(oldcxt);

	if (BufferIsValid(scan->vmbuffer))
		ReleaseBuffer(scan->vmbuffer);
	scan->vmbuffer = InvalidBuffer;

	hv_estimate_add_stratum(&scan->est, &stratum);
}

/*
 * hv_collect_relations
 *		The heap relations heap_visibility() reads for relid, opened with
 *		AccessShareLock: the relation itself, or every leaf partition of a
 *		partitioned table; with toast, their TOAST relations instead.
 *
 * Foreign partitions hold no local pages and are skipped.
 */
static List *
hv_collect_relations(Oid relid, bool toast, const char *caller)
{
	List	   *result = NIL;
	List	   *leaves = NIL;
	Relation	rel;
	ListCell   *lc;
	int			kinds = SL_ALLOW_TABLE | SL_ALLOW_MATVIEW | SL_ALLOW_PARTITIONED;

	if (!toast)
		kinds |= SL_ALLOW_TOAST;
	rel = storagelab_open_heap_relation(relid, kinds, caller);

	if (rel->rd_rel->relkind != RELKIND_PARTITIONED_TABLE)
		leaves = list_make1(rel);
	else
	{
		List	   *children = find_all_inheritors(relid, AccessShareLock, NULL);

		foreach(lc, children)
		{
			Oid			child = lfirst_oid(lc);
			char		relkind = get_rel_relkind(child);

			if (relkind != RELKIND_RELATION && relkind != RELKIND_MATVIEW)
				continue;		/* the parent itself, sub-parents, foreign */
			leaves = lappend(leaves,
							 storagelab_open_heap_relation(child,
														   SL_ALLOW_TABLE | SL_ALLOW_MATVIEW |
														   SL_PRIVILEGE_CHECKED,
														   caller));
		}
		relation_close(rel, AccessShareLock);
	}

	if (!toast)
		return leaves;

	foreach(lc, leaves)
	{
		Relation	leaf = (Relation) lfirst(lc);
		Oid			toastrelid = leaf->rd_rel->reltoastrelid;

		if (OidIsValid(toastrelid))
			result = lappend(result, relation_open(toastrelid, AccessShareLock));
		relation_close(leaf, AccessShareLock);
	}
	return result;
}

/*
 * hv_advice
 *		What a DBA should do about the figures, as one sentence or a few
 *		separated by "; ".
 */
static char *
hv_advice(HvScan *scan, int nrelations, bool toast, int32 oldest_age)
{
	HvEstimate *est = &scan->est;
	StringInfoData buf;
	double		pages = (double) est->pages;
	double		debt_pages = est->total[HV_HINT_DEBT_PAGES];
	double		tuples = est->total[HV_TUPLES];
	double		dead = est->total[HV_DEAD_ITEMS] + est->total[HV_DELETED_TUPLES];

	if (nrelations == 0)
		return pstrdup(toast ? "nothing to do: the table has no TOAST table" :
					   "nothing to do: the table has no partitions with storage");
	if (est->pages == 0)
		return pstrdup("nothing to do: the relation is empty");

	initStringInfo(&buf);
#define ADVISE(...) \
	do { \
		if (buf.len > 0) \
			appendStringInfoString(&buf, "; "); \
		appendStringInfo(&buf, __VA_ARGS__); \
	} while (0)

	if (est->total[HV_PD_ALL_VISIBLE_MISMATCHES] > 0)
		ADVISE("VACUUM: %.0f pages disagree with the visibility map (VACUUM repairs them; check the server log for its warnings)",
			   est->total[HV_PD_ALL_VISIBLE_MISMATCHES]);
	if (debt_pages >= Max(1.0, 0.01 * pages))
	{
		ADVISE("VACUUM: the next read would dirty %.0f pages (%.0f%%) to set hint bits, and write them again",
			   debt_pages, 100.0 * debt_pages / pages);
		if (est->total[HV_XMIN_UNHINTED] >= 0.5 * tuples)
			ADVISE("for bulk loads, COPY ... FREEZE into a table created or truncated in the same transaction writes the rows frozen and all-visible");
	}
	if (oldest_age >= vacuum_freeze_table_age)
		ADVISE("VACUUM (FREEZE): the oldest unfrozen XID is %d transactions old, past vacuum_freeze_table_age; the next VACUUM will be aggressive and read %.0f not-all-frozen pages",
			   oldest_age, pages - (double) scan->all_frozen_pages);
	else if (oldest_age >= vacuum_freeze_min_age &&
			 (double) scan->all_frozen_pages < 0.5 * pages)
		ADVISE("VACUUM (FREEZE) at a quiet time: %.0f%% of pages are not all-frozen and hold XIDs older than vacuum_freeze_min_age",
			   100.0 * (pages - (double) scan->all_frozen_pages) / pages);
	if (dead > Max(50.0, 0.1 * tuples))
		ADVISE("VACUUM: %.0f dead line pointers and deleted tuples", dead);
	else if ((double) scan->all_visible_pages < 0.5 * pages && buf.len == 0)
		ADVISE("VACUUM: only %.0f%% of pages are all-visible, so index-only scans visit the heap",
			   100.0 * (double) scan->all_visible_pages / pages);

	if (buf.len == 0)
		appendStringInfoString(&buf, "nothing to do");
#undef ADVISE
	return buf.data;
}

/*
 * hv_intervals_jsonb
 *		The 95% confidence intervals as jsonb: {"figure": {"low": n,
 *		"high": m}, ...}.
 */
static Datum
hv_intervals_jsonb(HvScan *scan)
{
	StringInfoData buf;
	int			f;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	for (f = 0; f < HV_NUM_FIGURES; f++)
	{
		int64		low,
					high;

		hv_estimate_interval(&scan->est, (HvFigure) f, &low, &high);
		appendStringInfo(&buf, "%s\"%s\": {\"low\": " INT64_FORMAT ", \"high\": " INT64_FORMAT "}",
						 f > 0 ? ", " : "", hv_figure_names[f], low, high);
	}
	appendStringInfoChar(&buf, '}');
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data));
}

/*
 * hv_run
 *		Body of heap_visibility() and heap_visibility_toast().
 */
static Datum
hv_run(FunctionCallInfo fcinfo, bool toast, const char *caller)
{
	Oid			relid;
	int			sample_pages = 0;
	List	   *rels;
	ListCell   *lc;
	BlockNumber *nblocks;
	uint64		total_pages = 0;
	int			i;
	HvScan		scan;
	TupleDesc	tupdesc;
	Datum		values[32];
	bool		nulls[32];
	int			col = 0;
	int32		oldest_age = 0;
	int			f;
	HeapTuple	tuple;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	relid = PG_GETARG_OID(0);
	if (!PG_ARGISNULL(1))
	{
		sample_pages = PG_GETARG_INT32(1);
		if (sample_pages <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("sample_pages must be positive"),
					 errdetail("sample_pages was %d.", sample_pages),
					 errhint("Pass NULL (the default) to read every page.")));
	}

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (tupdesc->natts > lengthof(values))
		elog(ERROR, "unexpected result type of %s()", caller);

	rels = hv_collect_relations(relid, toast, caller);

	memset(&scan, 0, sizeof(scan));
	hv_estimate_init(&scan.est);
	scan.strategy = GetAccessStrategy(BAS_BULKREAD);
	scan.pagecxt = AllocSetContextCreate(CurrentMemoryContext,
										 "heap_visibility page",
										 ALLOCSET_SMALL_SIZES);
	scan.in_recovery = RecoveryInProgress();
	/* In recovery a hint dirties a page only when hints are not WAL-logged. */
	scan.hints_dirty = !(scan.in_recovery && XLogHintBitIsNeeded());
	scan.hints_logged = !scan.in_recovery && XLogHintBitIsNeeded();
	scan.redo = GetRedoRecPtr();
	scan.next_xid = ReadNextTransactionId();
	scan.oldest_clog_xid = TransamVariables->oldestClogXid;
	scan.oldest_unfrozen = InvalidTransactionId;

	nblocks = palloc0(sizeof(BlockNumber) * (list_length(rels) + 1));
	i = 0;
	foreach(lc, rels)
	{
		nblocks[i] = RelationGetNumberOfBlocks((Relation) lfirst(lc));
		total_pages += nblocks[i++];
	}

	i = 0;
	foreach(lc, rels)
	{
		Relation	rel = (Relation) lfirst(lc);
		int			n = 0;

		if (sample_pages > 0 && total_pages > (uint64) sample_pages)
			n = hv_sample_allocation(nblocks[i], total_pages, sample_pages);
		hv_read_relation(&scan, rel, nblocks[i], n);
		relation_close(rel, AccessShareLock);
		i++;
	}

	/* Ages as the SQL function age() computes them. */
	if (TransactionIdIsValid(scan.oldest_unfrozen))
	{
		TransactionId now = GetTopTransactionIdIfAny();

		if (!TransactionIdIsValid(now))
			now = ReadNextTransactionId();
		oldest_age = (int32) (now - scan.oldest_unfrozen);
	}

	memset(nulls, 0, sizeof(nulls));
	values[col++] = Int64GetDatum((int64) scan.est.pages);
	values[col++] = Int64GetDatum((int64) scan.est.scanned);
	values[col++] = Int64GetDatum((int64) scan.all_visible_pages);
	values[col++] = Int64GetDatum((int64) scan.all_frozen_pages);
	for (f = 0; f < HV_NUM_FIGURES; f++)
		values[col++] = Int64GetDatum((int64) llround(scan.est.total[f]));
	if (TransactionIdIsValid(scan.oldest_unfrozen))
		values[col] = Int32GetDatum(oldest_age);
	else
		nulls[col] = true;
	col++;
	values[col++] = CStringGetTextDatum(hv_advice(&scan, list_length(rels), toast,
												  oldest_age));
	values[col++] = BoolGetDatum(!scan.est.exact);
	values[col++] = Int32GetDatum(list_length(rels));
	if (scan.est.exact)
		nulls[col] = true;
	else
		values[col] = hv_intervals_jsonb(&scan);
	col++;

	if (col != tupdesc->natts)
		elog(ERROR, "unexpected result type of %s()", caller);

	FreeAccessStrategy(scan.strategy);
	MemoryContextDelete(scan.pagecxt);

	tuple = heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls);
	PG_RETURN_DATUM(HeapTupleGetDatum(tuple));
}

/*
 * storagelab_heap_visibility
 *		heap_visibility(relation regclass, sample_pages integer DEFAULT NULL)
 *
 * One row of hint-bit, freeze and visibility-map figures of a table,
 * materialized view or TOAST table, or the sum over the leaf partitions of
 * a partitioned table.  NULL relation gives NULL; NULL sample_pages reads
 * every page.  Takes AccessShareLock; never sets a hint bit.
 */
Datum
storagelab_heap_visibility(PG_FUNCTION_ARGS)
{
	return hv_run(fcinfo, false, "heap_visibility");
}

/*
 * storagelab_heap_visibility_toast
 *		heap_visibility_toast(relation regclass, sample_pages integer DEFAULT NULL)
 *
 * The same figures for the TOAST relation of a table or materialized view
 * (summed over the leaf partitions' TOAST relations of a partitioned table).
 * The caller needs SELECT on the table, not on its TOAST relation.
 */
Datum
storagelab_heap_visibility_toast(PG_FUNCTION_ARGS)
{
	return hv_run(fcinfo, true, "heap_visibility_toast");
}
