/*-------------------------------------------------------------------------
 *
 * visibility_page.c
 *	  Classifying one heap page for heap_visibility(), without changing it.
 *
 * A page is read under a share lock and classified from the tuple headers'
 * t_infomask alone.  Whether a tuple carries hint-bit debt (an xmin or xmax
 * whose transaction has ended but whose hint bit is not set yet) is decided
 * from the transaction's status (TransactionIdIsInProgress,
 * TransactionIdDidCommit), the way HeapTupleSatisfiesMVCC would decide it,
 * but nothing is ever set: no HeapTupleSatisfies* call, no SetHintBits, no
 * pruning, no dirtied buffer.
 *
 * Whether a sequential scan done now would dirty the page (hint_debt_pages)
 * follows heapgetpage(): heap_page_prune_opt() first, then a visibility
 * check of every tuple unless the page is all-visible (outside recovery);
 * a buffer that is already dirty is not dirtied again.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/transam.h"
#include "access/visibilitymap.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xlogrecord.h"
#include "miscadmin.h"
#include "storage/buf_internals.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "storage/freespace.h"
#include "storage/fsm_internals.h"
#include "storage/procarray.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "compat.h"
#include "heap_visibility.h"
#include "storagelab.h"

/* The visibility-map page holding a heap block's bits. */
#define HV_HEAPBLOCKS_PER_VM_PAGE \
	((BLCKSZ - MAXALIGN(SizeOfPageHeaderData)) * (BITS_PER_BYTE / BITS_PER_HEAPBLOCK))
#define HV_VM_BLOCK(heapblk) ((BlockNumber) ((heapblk) / HV_HEAPBLOCKS_PER_VM_PAGE))
/* The free-space-map leaf page (numbered among the leaves) of a heap block. */
#define HV_FSM_LEAF(heapblk) ((BlockNumber) ((heapblk) / SlotsPerFSMPage))
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

	if ((TransactionIdIsNormal(scan->relfrozenxid) &&
		 TransactionIdPrecedes(xid, scan->relfrozenxid)) ||
		!TransactionIdPrecedes(xid, scan->next_xid))
		status = HV_XID_UNKNOWN;
	else if (TransactionIdIsInProgress(xid))
		status = HV_XID_IN_PROGRESS;
	else
	{
		bool		committed;

		/* Older than what clog keeps (it may be truncated meanwhile). */
		if (!storagelab_xid_did_commit(xid, &committed))
			status = HV_XID_UNKNOWN;
		else
			status = committed ? HV_XID_COMMITTED : HV_XID_ABORTED;
	}

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
	if (!GlobalVisTestIsRemovableXid(scan->vistest, prune_xid, true))
		return false;
	return PageIsFull(page) || PageGetHeapFreeSpace(page) < scan->prune_minfree;
}

/*
 * hv_all_visible_after_prune
 *		Whether this page would be all-visible once heap_page_prune_opt()
 *		pruned it, so that PostgreSQL 19's on-access pruning would set its
 *		visibility-map bit: no LP_DEAD item left, and every remaining tuple
 *		inserted by a committed transaction that every snapshot sees, and not
 *		deleted or updated (a lock-only or aborted xmax does not count).  A
 *		dead tuple at the end of a HOT chain leaves an LP_DEAD item (its
 *		root); a dead heap-only tuple inside a chain, or an aborted heap-only
 *		insert, becomes LP_UNUSED and does not count either.
 */
static bool
hv_all_visible_after_prune(HvScan *scan, Page page, OffsetNumber maxoff,
						   bool *frees_space)
{
	OffsetNumber off;

	*frees_space = false;

	for (off = FirstOffsetNumber; off <= maxoff; off = OffsetNumberNext(off))
	{
		ItemId		lp = PageGetItemId(page, off);
		HeapTupleHeader tup;
		uint16		infomask;
		TransactionId xid;
		bool		dead = false;

		if (ItemIdIsDead(lp))
			return false;
		if (!ItemIdIsNormal(lp))
			continue;			/* unused or redirect */
		if (ItemIdGetOffset(lp) < SizeOfPageHeaderData ||
			ItemIdGetLength(lp) < SizeofHeapTupleHeader ||
			ItemIdGetOffset(lp) + ItemIdGetLength(lp) > BLCKSZ)
			return false;		/* damaged: assume the worst */
		tup = (HeapTupleHeader) PageGetItem(page, lp);
		infomask = tup->t_infomask;

		/* xmin: frozen, or committed and visible to every snapshot */
		xid = HeapTupleHeaderGetRawXmin(tup);
		if ((infomask & HEAP_XMIN_FROZEN) == HEAP_XMIN_FROZEN)
			;
		else if (infomask & HEAP_XMIN_INVALID)
			dead = true;
		else if (infomask & HEAP_XMIN_COMMITTED)
		{
			if (!GlobalVisTestIsRemovableXid(scan->vistest, xid, true))
				return false;
		}
		else
		{
			switch (hv_xid_status(scan, xid))
			{
				case HV_XID_COMMITTED:
					if (!GlobalVisTestIsRemovableXid(scan->vistest, xid, true))
						return false;
					break;
				case HV_XID_ABORTED:
					dead = true;
					break;
				default:
					return false;
			}
		}
		if (dead)
		{
			/* an aborted insert: LP_UNUSED if heap-only, else LP_DEAD */
			if (!HeapTupleHeaderIsHeapOnly(tup))
				return false;
			*frees_space = true;
			continue;
		}

		/* xmax: none, lock-only or aborted keeps the tuple live */
		if (infomask & HEAP_XMAX_INVALID)
			continue;
		if (HEAP_XMAX_IS_LOCKED_ONLY(infomask))
			continue;
		if (infomask & HEAP_XMAX_IS_MULTI)
			return false;		/* an updater in a multixact: not resolved */
		xid = HeapTupleHeaderGetRawXmax(tup);
		if (!TransactionIdIsValid(xid))
			continue;
		if (!(infomask & HEAP_XMAX_COMMITTED))
		{
			HvXidStatus status = hv_xid_status(scan, xid);

			if (status == HV_XID_ABORTED)
				continue;
			if (status != HV_XID_COMMITTED)
				return false;
		}
		/* deleted or updated: removed only if dead to every snapshot */
		if (!GlobalVisTestIsRemovableXid(scan->vistest, xid, true))
			return false;
		if (!HeapTupleHeaderIsHotUpdated(tup))
			return false;		/* its chain ends dead: an LP_DEAD root */
		*frees_space = true;	/* removed from its HOT chain */
	}
	return true;
}

/*
 * hv_fsm_would_change
 *		Whether recording the page's free space after pruning would change
 *		its free-space-map entry (the map stores it in steps of BLCKSZ / 256
 *		bytes).  When pruning removes tuples the space it frees is not known
 *		before the page is defragmented: then it counts as a change.
 */
static bool
hv_fsm_would_change(HvScan *scan, BlockNumber blkno, Page page,
					bool frees_space)
{
	Size		avail = PageGetHeapFreeSpace(page);
	Size		step = BLCKSZ / 256;
	Size		stored;

	if (frees_space)
		return true;
	if (avail >= MaxHeapTupleSize)
		stored = MaxHeapTupleSize;
	else
		stored = Min(avail / step, 254) * step;
	return GetRecordedFreeSpace(scan->rel, blkno) != stored;
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
	return (storagelab_buffer_state(hdr) & BM_DIRTY) != 0;
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
 * storagelab_hv_read_page
 *		Classify the page in buffer (a block of scan->rel, pinned by the
 *		caller and not locked) under a share lock, add its counts to stratum,
 *		and release the buffer.  Never modifies the page or its buffer.
 */
void
storagelab_hv_read_page(HvScan *scan, Buffer buffer, HvStratum *stratum)
{
	double		fig[HV_NUM_FIGURES] = {0};
	BlockNumber blkno = BufferGetBlockNumber(buffer);
	Page		page;
	uint8		vmstatus;
	int			items = 0;

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
		bool		prunes;
		bool		dirties;
		bool		frees_space;

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
		prunes = hv_would_prune(scan, page);
		dirties = prunes ||
			(debt_tuples > 0 && scan->hints_dirty &&
			 (scan->in_recovery || !all_visible));
		if (dirties && !hv_buffer_is_dirty(buffer))
		{
			fig[HV_HINT_DEBT_PAGES] = 1;
			if (scan->hints_logged && scan->permanent &&
				PageGetLSN(page) <= scan->redo)
				fig[HV_HINT_DEBT_WAL_BYTES] = hv_fpi_bytes(page);
		}

		/*
		 * From PostgreSQL 19 on, pruning that leaves the page all-visible
		 * sets its visibility-map bit (and PD_ALL_VISIBLE, on a page the
		 * pruning dirties anyway): the map page is dirtied too, once, unless
		 * it is dirty already.  A missing map page is created by that read
		 * and counts the same.
		 */
		if (STORAGELAB_ON_ACCESS_PRUNE_SETS_VM && prunes &&
			!(vmstatus & VISIBILITYMAP_ALL_VISIBLE) &&
			hv_all_visible_after_prune(scan, page, maxoff, &frees_space))
		{
			if (HV_VM_BLOCK(blkno) != scan->vm_debt_block &&
				!(BufferIsValid(scan->vmbuffer) &&
				  BufferGetBlockNumber(scan->vmbuffer) == HV_VM_BLOCK(blkno) &&
				  hv_buffer_is_dirty(scan->vmbuffer)))
			{
				fig[HV_HINT_DEBT_PAGES] += 1;
				scan->vm_debt_block = HV_VM_BLOCK(blkno);
			}

			/*
			 * It also records the page's free space, since VACUUM will now
			 * skip the page: where the relation has a free space map, that
			 * dirties its leaf page when the entry changes.  (Whether that
			 * leaf is dirty already is not known without reading it.)
			 */
			if (scan->fsm_exists &&
				HV_FSM_LEAF(blkno) != scan->fsm_debt_leaf &&
				hv_fsm_would_change(scan, blkno, page, frees_space))
			{
				fig[HV_HINT_DEBT_PAGES] += 1;
				scan->fsm_debt_leaf = HV_FSM_LEAF(blkno);
			}
		}
	}

	UnlockReleaseBuffer(buffer);
	storagelab_hv_stratum_add_page(stratum, fig, items);
}
