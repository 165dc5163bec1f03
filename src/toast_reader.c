/*-------------------------------------------------------------------------
 *
 * toast_reader.c
 *	  Reading the first chunk of TOAST values without writing anything.
 *
 * toast_profile() (src/toast_profile.c) sniffs the first bytes of each
 * out-of-line value.  PostgreSQL's detoast_attr_slice() would do, but its
 * index scan may prune the TOAST heap page it visits (heap_page_prune_opt),
 * and storagelab's readers never write.  This file finds a value's chunk 0
 * -- by a guess from the previous value's chunks, else through the TOAST
 * index -- and reads it from the TOAST heap page under a share lock.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/toast_internals.h"
#include "storage/bufmgr.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"

#include "compat.h"
#include "toast_reader.h"

/*
 * ToastReader: what fetching value prefixes from a TOAST table needs.
 *
 * Besides the TOAST index, the reader keeps a guess of where the next
 * value's first chunk is: toast_save_datum() writes a value's chunks one
 * after the other, so when values were written in the order their rows sit
 * in the heap (bulk loads, append-mostly tables), the next value starts on
 * the page that holds the previous value's last chunk -- or, when that page
 * ends with that last chunk, on the page after.  A guess costs at most one
 * page that turns out useless (the second page is read only when the first
 * ends with the previous value's last chunk), and a chunk is accepted only
 * when its chunk_id and chunk_seq say it is the one wanted.  When guesses
 * keep missing (a table with a shuffled TOAST layout), the reader stops
 * guessing and uses the index only.
 */
struct ToastReader
{
	Relation	toastrel;		/* the TOAST table */
	Relation	toastidx;		/* its valid index on (chunk_id, chunk_seq) */
	IndexScanDesc scan;			/* one index scan, rescanned per value */
	BufferAccessStrategy strategy;
	Snapshot	snapshot;
	BlockNumber toast_nblocks;	/* TOAST pages when the census started */
	bool		guess_valid;	/* the fields below describe the last value */
	BlockNumber guess;			/* page its last chunk is probably on */
	Oid			prev_valueid;	/* its value id */
	int32		prev_last_seq;	/* its last chunk number */
	int64		guesses;		/* first chunks looked for by guess */
	int64		guess_hits;		/* ... and found */
};

/* Give up guessing after this many tries with fewer than half found. */
#define GUESS_TRIAL		64

/*
 * chunk0_on_page
 *		Look on TOAST page blkno for chunk 0 of value valueid -- at offset
 *		offnum, or at any offset when offnum is InvalidOffsetNumber -- and
 *		copy up to maxlen bytes of its data into dest.  Returns the number of
 *		bytes copied, or -1 when the chunk is not there; *found_off is set to
 *		its offset, and *on_page to the number of the value's chunks on this
 *		page.  *ends_with_prev is set when the page's last tuple is the last
 *		chunk of the previously read value (reader->prev_*).  Share-locks the
 *		page; writes nothing.
 */
static int
chunk0_on_page(ToastReader *reader, BlockNumber blkno, OffsetNumber offnum,
			   Oid valueid, char *dest, int maxlen, OffsetNumber *found_off,
			   int *on_page, bool *ends_with_prev)
{
	TupleDesc	tupdesc = RelationGetDescr(reader->toastrel);
	Buffer		buffer;
	Page		page;
	OffsetNumber off;
	OffsetNumber maxoff;
	int			copied = -1;

	*ends_with_prev = false;
	*on_page = 0;
	buffer = ReadBufferExtended(reader->toastrel, MAIN_FORKNUM, blkno,
								RBM_NORMAL, reader->strategy);
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buffer);
	maxoff = PageIsNew(page) ? InvalidOffsetNumber : PageGetMaxOffsetNumber(page);

	for (off = OffsetNumberIsValid(offnum) ? offnum : FirstOffsetNumber;
		 off <= maxoff && copied < 0;
		 off = OffsetNumberIsValid(offnum) ? maxoff + 1 : OffsetNumberNext(off))
	{
		ItemId		itemid = PageGetItemId(page, off);
		HeapTupleData tuple;
		bool		isnull;
		Oid			chunk_id;
		int32		chunk_seq;
		Datum		datum;

		if (!ItemIdIsNormal(itemid))
			continue;
		tuple.t_data = (HeapTupleHeader) PageGetItem(page, itemid);
		tuple.t_len = ItemIdGetLength(itemid);
		tuple.t_tableOid = RelationGetRelid(reader->toastrel);
		ItemPointerSet(&tuple.t_self, blkno, off);

		datum = heap_getattr(&tuple, 1, tupdesc, &isnull);
		if (isnull)
			continue;
		chunk_id = DatumGetObjectId(datum);
		datum = heap_getattr(&tuple, 2, tupdesc, &isnull);
		if (isnull)
			continue;
		chunk_seq = DatumGetInt32(datum);
		*ends_with_prev = (reader->guess_valid && chunk_id == reader->prev_valueid &&
						   chunk_seq == reader->prev_last_seq);
		if (chunk_id != valueid || chunk_seq != 0)
			continue;

		datum = heap_getattr(&tuple, 3, tupdesc, &isnull);
		if (isnull || VARATT_IS_EXTERNAL(DatumGetPointer(datum)) ||
			VARATT_IS_COMPRESSED(DatumGetPointer(datum)))
			continue;
		copied = Min(maxlen, (int) VARSIZE_ANY_EXHDR(DatumGetPointer(datum)));
		memcpy(dest, VARDATA_ANY(DatumGetPointer(datum)), copied);
		*found_off = off;
	}

	/* Count the value's chunks from chunk 0 to the end of the page. */
	if (copied >= 0)
	{
		for (off = *found_off; off <= maxoff; off = OffsetNumberNext(off))
		{
			ItemId		itemid = PageGetItemId(page, off);
			HeapTupleData tuple;
			bool		isnull;
			Datum		datum;

			if (!ItemIdIsNormal(itemid))
				continue;
			tuple.t_data = (HeapTupleHeader) PageGetItem(page, itemid);
			tuple.t_len = ItemIdGetLength(itemid);
			datum = heap_getattr(&tuple, 1, tupdesc, &isnull);
			if (!isnull && DatumGetObjectId(datum) == valueid)
				(*on_page)++;
		}
	}
	UnlockReleaseBuffer(buffer);
	return copied;
}

/*
 * chunk_tuple_space
 *		Bytes of a page that a TOAST chunk tuple holding len data bytes takes,
 *		line pointer included.
 */
static Size
chunk_tuple_space(int32 len)
{
	Size		data = (len + 1 <= VARATT_SHORT_MAX) ? len + 1 : len + VARHDRSZ;

	return MAXALIGN(MAXALIGN(SizeofHeapTupleHeader) + sizeof(Oid) + sizeof(int32) + data) +
		sizeof(ItemIdData);
}

/*
 * storagelab_toast_read_first_chunk
 *		Copy up to maxlen bytes of chunk 0 of the TOAST value that
 *		toast_pointer points to into dest; returns the number of bytes
 *		copied (0 if the chunk is missing).
 *
 * PostgreSQL's own slice fetch (detoast_attr_slice) goes through an index
 * scan that may prune the TOAST heap page it visits.  This reader reads the
 * TOAST heap pages itself under a share lock, and asks the index only for
 * the chunk's TID (index_getnext_tid, which never kills index entries): it
 * writes nothing.  TOAST chunks are never updated, so there is no HOT chain
 * to follow; the chunks of a value visible to our snapshot cannot have been
 * removed, and a value id is not reused while any of its chunks remain, so
 * the tuple with this chunk_id and chunk_seq 0 is the one wanted.
 */
int
storagelab_toast_read_first_chunk(ToastReader *reader,
								  struct varatt_external *toast_pointer,
								  char *dest, int maxlen)
{
	Oid			valueid = toast_pointer->va_valueid;
	int32		nchunks;
	BlockNumber blkno = InvalidBlockNumber;
	OffsetNumber off = InvalidOffsetNumber;
	bool		ends_with_prev;
	int			on_page = 0;
	int			copied = -1;

	/* Where the previous value's chunks suggest this one starts. */
	if (reader->guess_valid && reader->guess < reader->toast_nblocks &&
		!(reader->guesses >= GUESS_TRIAL && reader->guess_hits * 2 < reader->guesses))
	{
		reader->guesses++;
		blkno = reader->guess;
		copied = chunk0_on_page(reader, blkno, InvalidOffsetNumber, valueid,
								dest, maxlen, &off, &on_page, &ends_with_prev);
		if (copied < 0 && ends_with_prev && blkno + 1 < reader->toast_nblocks)
		{
			blkno++;
			copied = chunk0_on_page(reader, blkno, InvalidOffsetNumber, valueid,
									dest, maxlen, &off, &on_page, &ends_with_prev);
		}
		if (copied >= 0)
			reader->guess_hits++;
	}

	/* Otherwise the index. */
	if (copied < 0)
	{
		ScanKeyData keys[2];
		ItemPointer tid;

		ScanKeyInit(&keys[0], (AttrNumber) 1, BTEqualStrategyNumber, F_OIDEQ,
					ObjectIdGetDatum(valueid));
		ScanKeyInit(&keys[1], (AttrNumber) 2, BTEqualStrategyNumber, F_INT4EQ,
					Int32GetDatum(0));
		index_rescan(reader->scan, keys, 2, NULL, 0);
		while (copied < 0 &&
			   (tid = index_getnext_tid(reader->scan, ForwardScanDirection)) != NULL)
		{
			blkno = ItemPointerGetBlockNumber(tid);
			copied = chunk0_on_page(reader, blkno, ItemPointerGetOffsetNumber(tid),
									valueid, dest, maxlen, &off, &on_page,
									&ends_with_prev);
		}
	}
	if (copied < 0)
	{
		reader->guess_valid = false;
		return 0;
	}

	/*
	 * Where this value's last chunk, and so most likely the next value's
	 * chunk 0, is: its chunks were written consecutively, on_page of them on
	 * this page, the rest EXTERN_TUPLES_PER_PAGE full chunks a page; the next
	 * value starts on the last chunk's page if a full chunk still fits there.
	 */
	nchunks = (VARATT_EXTERNAL_GET_EXTSIZE(*toast_pointer) + TOAST_MAX_CHUNK_SIZE - 1) /
		TOAST_MAX_CHUNK_SIZE;
	if (on_page >= nchunks)
		reader->guess = blkno;
	else
	{
		int32		rest = nchunks - on_page;
		int32		last_len = VARATT_EXTERNAL_GET_EXTSIZE(*toast_pointer) -
			(nchunks - 1) * TOAST_MAX_CHUNK_SIZE;
		Size		used = ((rest - 1) % EXTERN_TUPLES_PER_PAGE) *
			chunk_tuple_space(TOAST_MAX_CHUNK_SIZE) + chunk_tuple_space(last_len);

		reader->guess = blkno + 1 + (rest - 1) / EXTERN_TUPLES_PER_PAGE;
		if (BLCKSZ - SizeOfPageHeaderData - used < chunk_tuple_space(TOAST_MAX_CHUNK_SIZE))
			reader->guess++;
	}
	reader->prev_valueid = valueid;
	reader->prev_last_seq = nchunks - 1;
	reader->guess_valid = true;
	return copied;
}

/*
 * storagelab_toast_reader_open
 *		A reader for the TOAST table of rel, or NULL if rel has none.  Opens
 *		the TOAST table and its index with AccessShareLock and begins one
 *		index scan (in the current memory context, which must outlive the
 *		reader).  Pages are read through strategy; index lookups use
 *		snapshot.
 */
ToastReader *
storagelab_toast_reader_open(Relation rel, Snapshot snapshot,
							 BufferAccessStrategy strategy)
{
	ToastReader *reader;
	Oid			toastrelid = rel->rd_rel->reltoastrelid;

	if (!OidIsValid(toastrelid))
		return NULL;

	reader = palloc0(sizeof(ToastReader));
	reader->toastrel = table_open(toastrelid, AccessShareLock);
	reader->toastidx = index_open(toast_get_valid_index(toastrelid, AccessShareLock),
								  AccessShareLock);
	reader->scan = index_beginscan(reader->toastrel, reader->toastidx, snapshot,
								   NULL, 2, 0, SO_NONE);
	reader->strategy = strategy;
	reader->snapshot = snapshot;
	reader->toast_nblocks = RelationGetNumberOfBlocks(reader->toastrel);
	reader->guess = InvalidBlockNumber;
	reader->guess_valid = false;
	return reader;
}

/*
 * storagelab_toast_reader_relname
 *		Name of the TOAST table, for messages.
 */
const char *
storagelab_toast_reader_relname(ToastReader *reader)
{
	return RelationGetRelationName(reader->toastrel);
}

/*
 * storagelab_toast_reader_relid
 *		OID of the TOAST table, to check TOAST pointers against.
 */
Oid
storagelab_toast_reader_relid(ToastReader *reader)
{
	return RelationGetRelid(reader->toastrel);
}

/*
 * storagelab_toast_reader_close
 *		End the index scan and close the TOAST table and index.
 */
void
storagelab_toast_reader_close(ToastReader *reader)
{
	index_endscan(reader->scan);
	index_close(reader->toastidx, AccessShareLock);
	table_close(reader->toastrel, AccessShareLock);
	pfree(reader);
}
