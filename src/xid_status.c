/*-------------------------------------------------------------------------
 *
 * xid_status.c
 *	  Commit-log lookups and a hint-free visibility check shared by
 *	  storagelab's page readers.
 *
 * heap_visibility(), toast_census() and the index probe of int_overflow
 * decide whether a transaction committed without setting hint bits, so
 * they ask the commit log themselves.  Doing so for an xid older than the oldest entry clog still
 * keeps fails ("could not access status of transaction"), and VACUUM may
 * truncate clog while a long read is running: the check and the lookup are
 * therefore done together under XactTruncationLock, as pg_xact_status()
 * does.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/multixact.h"
#include "access/transam.h"
#include "access/xact.h"
#include "utils/snapmgr.h"
#include "storage/lwlock.h"

#include "compat.h"
#include "storagelab.h"

/*
 * storagelab_xid_did_commit
 *		Look up a normal xid, which the caller knows is not running, in the
 *		commit log.
 *
 * Returns false when clog no longer covers xid (its status is unknown: a
 * tuple with such an xid was frozen or removed by VACUUM, or its table is
 * damaged); otherwise sets *committed and returns true.  Never sets a hint
 * bit and never errors on a truncated clog.
 */
bool
storagelab_xid_did_commit(TransactionId xid, bool *committed)
{
	bool		known;

	Assert(TransactionIdIsNormal(xid));

	LWLockAcquire(XactTruncationLock, LW_SHARED);
	known = !TransactionIdPrecedes(xid, TransamVariables->oldestClogXid);
	if (known)
		*committed = TransactionIdDidCommit(xid);
	LWLockRelease(XactTruncationLock);
	return known;
}

/*
 * xid_committed
 *		Whether xid, which the caller knows is neither running in this
 *		backend nor in the snapshot, committed.  An xid the commit log no
 *		longer covers can only belong to a tuple that VACUUM froze or
 *		removed long ago; it is taken as committed.
 */
static bool
xid_committed(TransactionId xid)
{
	bool		committed;

	if (!TransactionIdIsNormal(xid))
		return xid == BootstrapTransactionId || xid == FrozenTransactionId;
	if (!storagelab_xid_did_commit(xid, &committed))
		return true;
	return committed;
}

/*
 * storagelab_tuple_visible
 *		Whether the tuple version is visible to snapshot, following the rules
 *		of HeapTupleSatisfiesMVCC but without ever setting a hint bit: hint
 *		bits already on the page are trusted, missing ones are replaced by a
 *		lookup (current transaction, snapshot, commit log) whose answer is
 *		not written back.  Pre-9.0 HEAP_MOVED tuples are judged by xmin.
 */
bool
storagelab_tuple_visible(HeapTupleHeader tuple, Snapshot snapshot)
{
	TransactionId xmax;

	/* Inserting transaction. */
	if (!HeapTupleHeaderXminCommitted(tuple))
	{
		TransactionId xmin;

		if (HeapTupleHeaderXminInvalid(tuple))
			return false;		/* aborted (hinted) */
		xmin = HeapTupleHeaderGetRawXmin(tuple);
		if (TransactionIdIsCurrentTransactionId(xmin))
		{
			if (HeapTupleHeaderGetCmin(tuple) >= snapshot->curcid)
				return false;	/* inserted after the scan started */
			if (tuple->t_infomask & HEAP_XMAX_INVALID)
				return true;
			if (HEAP_XMAX_IS_LOCKED_ONLY(tuple->t_infomask))
				return true;
			if (tuple->t_infomask & HEAP_XMAX_IS_MULTI)
			{
				xmax = HeapTupleGetUpdateXid(tuple);
				if (!TransactionIdIsCurrentTransactionId(xmax))
					return true;	/* updating subtransaction aborted */
				return HeapTupleHeaderGetCmax(tuple) >= snapshot->curcid;
			}
			xmax = HeapTupleHeaderGetRawXmax(tuple);
			if (!TransactionIdIsCurrentTransactionId(xmax))
				return true;	/* deleting subtransaction aborted */
			return HeapTupleHeaderGetCmax(tuple) >= snapshot->curcid;
		}
		if (XidInMVCCSnapshot(xmin, snapshot))
			return false;		/* still running for this snapshot */
		if (!xid_committed(xmin))
			return false;		/* aborted or crashed */
	}
	else if (!HeapTupleHeaderXminFrozen(tuple) &&
			 XidInMVCCSnapshot(HeapTupleHeaderGetRawXmin(tuple), snapshot))
		return false;			/* committed after the snapshot was taken */

	/* The inserting transaction is visible; now the deleting one. */
	if (tuple->t_infomask & HEAP_XMAX_INVALID)
		return true;
	if (HEAP_XMAX_IS_LOCKED_ONLY(tuple->t_infomask))
		return true;

	if (tuple->t_infomask & HEAP_XMAX_IS_MULTI)
	{
		xmax = HeapTupleGetUpdateXid(tuple);
		if (!TransactionIdIsValid(xmax))
			return true;
		if (TransactionIdIsCurrentTransactionId(xmax))
			return HeapTupleHeaderGetCmax(tuple) >= snapshot->curcid;
		if (XidInMVCCSnapshot(xmax, snapshot))
			return true;
		return !xid_committed(xmax);
	}

	xmax = HeapTupleHeaderGetRawXmax(tuple);
	if (!(tuple->t_infomask & HEAP_XMAX_COMMITTED))
	{
		if (TransactionIdIsCurrentTransactionId(xmax))
			return HeapTupleHeaderGetCmax(tuple) >= snapshot->curcid;
		if (XidInMVCCSnapshot(xmax, snapshot))
			return true;
		return !xid_committed(xmax);
	}
	/* Deleter committed (hinted): visible only if it is in the snapshot. */
	return XidInMVCCSnapshot(xmax, snapshot);
}
