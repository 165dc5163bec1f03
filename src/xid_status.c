/*-------------------------------------------------------------------------
 *
 * xid_status.c
 *	  Commit-log lookups shared by storagelab's page readers.
 *
 * heap_visibility() and toast_census() decide whether a transaction
 * committed without setting hint bits, so they ask the commit log
 * themselves.  Doing so for an xid older than the oldest entry clog still
 * keeps fails ("could not access status of transaction"), and VACUUM may
 * truncate clog while a long read is running: the check and the lookup are
 * therefore done together under XactTruncationLock, as pg_xact_status()
 * does.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
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
