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
 * index -- and hands the caller its data in place, on the TOAST heap page
 * held under a share lock until the caller is done with it.
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
 *
 * The TOAST page read last stays pinned: small values share pages, and the
 * next value's chunk 0 is often on the page just read, which is then locked
 * again without another buffer lookup.
 */
struct ToastReader
{
	Relation	toastrel;		/* the TOAST table */
	Relation	toastidx;		/* its valid index on (chunk_id, chunk_seq) */
	IndexScanDesc scan;			/* one index scan, rescanned per value */
	BufferAccessStrategy strategy;
	Buffer		buffer;			/* the TOAST page read last, kept pinned (not
								 * locked) between values, or InvalidBuffer */
	Snapshot	snapshot;
	BlockNumber toast_nblocks;	/* TOAST pages when the census started */
	bool		guess_valid;	/* the fields below describe the last value */
	BlockNumber guess;			/* page its last chunk is probably on */
	Oid			prev_valueid;	/* its value id */
	int32		prev_last_seq;	/* its last chunk number */
	OffsetNumber next_off;		/* offset after its chunks on its first page:
								 * where the next value's chunk 0 would be on
								 * that page */
	bool		locked;			/* buffer is share-locked for the caller */
	int64		guesses;		/* first chunks looked for by guess */
	int64		guess_hits;		/* ... and found */
};

/* Give up guessing after this many tries with fewer than half found. */
#define GUESS_TRIAL		64

/*
 * chunk_fields
 *		chunk_id and chunk_seq of the TOAST tuple at off on page (normal
 *		line pointer), and a pointer to its chunk_data (NULL if null).
 *		TOAST tuples are (oid, int4, bytea) and never hold NULLs, so the
 *		fields are read at their fixed offsets; heap_getattr() is the
 *		fallback for a tuple that claims NULLs.
 */
static inline void
chunk_fields(ToastReader *reader, Page page, BlockNumber blkno, OffsetNumber off,
			 Oid *chunk_id, int32 *chunk_seq, struct varlena **data)
{
	ItemId		itemid = PageGetItemId(page, off);
	HeapTupleHeader tup = (HeapTupleHeader) PageGetItem(page, itemid);

	if (!(tup->t_infomask & HEAP_HASNULL))
	{
		char	   *tp = (char *) tup + tup->t_hoff;

		*chunk_id = *(Oid *) tp;
		*chunk_seq = *(int32 *) (tp + sizeof(Oid));
		*data = (struct varlena *) (tp + sizeof(Oid) + sizeof(int32));
	}
	else
	{
		HeapTupleData tuple;
		bool		isnull;
		Datum		datum;

		tuple.t_data = tup;
		tuple.t_len = ItemIdGetLength(itemid);
		tuple.t_tableOid = RelationGetRelid(reader->toastrel);
		ItemPointerSet(&tuple.t_self, blkno, off);
		datum = heap_getattr(&tuple, 1, RelationGetDescr(reader->toastrel), &isnull);
		*chunk_id = isnull ? InvalidOid : DatumGetObjectId(datum);
		datum = heap_getattr(&tuple, 2, RelationGetDescr(reader->toastrel), &isnull);
		*chunk_seq = isnull ? -1 : DatumGetInt32(datum);
		datum = heap_getattr(&tuple, 3, RelationGetDescr(reader->toastrel), &isnull);
		*data = isnull ? NULL : (struct varlena *) DatumGetPointer(datum);
	}
}

/*
 * chunk0_on_page
 *		Look on TOAST page blkno for chunk 0 of value valueid -- at offset
 *		offnum, or at any offset when offnum is InvalidOffsetNumber (starting
 *		at start_off, where it most likely is, and wrapping around).  When
 *		found, returns a pointer to its data on the page, sets *len to its
 *		length, *found_off to its offset and *on_page to the number of the
 *		value's chunks from there to the end of the page, and leaves the page
 *		share-locked (storagelab_toast_chunk_done() unlocks it).  Otherwise
 *		returns NULL with the page unlocked, and sets *ends_with_prev when the
 *		page's last tuple is the last chunk of the previously read value
 *		(reader->prev_*).  The page stays pinned in reader->buffer either
 *		way; nothing is written.
 */
static const char *
chunk0_on_page(ToastReader *reader, BlockNumber blkno, OffsetNumber offnum,
			   OffsetNumber start_off, Oid valueid, int *len,
			   OffsetNumber *found_off, int *on_page, bool *ends_with_prev)
{
	Buffer		buffer;
	Page		page;
	OffsetNumber maxoff;
	OffsetNumber off;
	OffsetNumber first;
	OffsetNumber last;
	int			n;
	Oid			chunk_id;
	int32		chunk_seq;
	struct varlena *data = NULL;
	bool		found = false;

	*ends_with_prev = false;
	*on_page = 0;
	buffer = reader->buffer;
	if (!BufferIsValid(buffer) || BufferGetBlockNumber(buffer) != blkno)
	{
		if (BufferIsValid(buffer))
			ReleaseBuffer(buffer);
		reader->buffer = InvalidBuffer;
		buffer = ReadBufferExtended(reader->toastrel, MAIN_FORKNUM, blkno,
									RBM_NORMAL, reader->strategy);
		reader->buffer = buffer;
	}
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buffer);
	maxoff = PageIsNew(page) ? InvalidOffsetNumber : PageGetMaxOffsetNumber(page);

	if (OffsetNumberIsValid(offnum))
	{
		first = offnum;
		n = offnum <= maxoff ? 1 : 0;
	}
	else
	{
		first = (start_off >= FirstOffsetNumber && start_off <= maxoff) ?
			start_off : FirstOffsetNumber;
		n = maxoff;
	}
	for (off = first; n > 0; n--, off = (off == maxoff) ? FirstOffsetNumber : off + 1)
	{
		if (!ItemIdIsNormal(PageGetItemId(page, off)))
			continue;
		chunk_fields(reader, page, blkno, off, &chunk_id, &chunk_seq, &data);
		if (chunk_id == valueid && chunk_seq == 0 && data != NULL &&
			!VARATT_IS_EXTERNAL(data) && !VARATT_IS_COMPRESSED(data))
		{
			found = true;
			break;
		}
	}

	if (!found)
	{
		/* Whether the page ends with the previous value's last chunk. */
		for (last = maxoff; last >= FirstOffsetNumber; last--)
		{
			if (!ItemIdIsNormal(PageGetItemId(page, last)))
				continue;
			chunk_fields(reader, page, blkno, last, &chunk_id, &chunk_seq, &data);
			*ends_with_prev = (reader->guess_valid && chunk_id == reader->prev_valueid &&
							   chunk_seq == reader->prev_last_seq);
			break;
		}
		LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
		return NULL;
	}

	/* Count the value's chunks from chunk 0 to the end of the page. */
	*found_off = off;
	for (last = off; last <= maxoff; last = OffsetNumberNext(last))
	{
		Oid			id;
		int32		seq;
		struct varlena *d;

		if (!ItemIdIsNormal(PageGetItemId(page, last)))
			continue;
		chunk_fields(reader, page, blkno, last, &id, &seq, &d);
		if (id == valueid)
			(*on_page)++;
	}
	reader->locked = true;
	*len = (int) VARSIZE_ANY_EXHDR(data);
	return VARDATA_ANY(data);
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
 * storagelab_toast_first_chunk
 *		The data of chunk 0 of the TOAST value that toast_pointer points to,
 *		in place on its TOAST page, which stays share-locked until the caller
 *		calls storagelab_toast_chunk_done(); *len is set to its length.
 *		Returns NULL (nothing locked) if the chunk is missing.
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
const char *
storagelab_toast_first_chunk(ToastReader *reader,
							 struct varatt_external *toast_pointer, int *len)
{
	Oid			valueid = toast_pointer->va_valueid;
	int32		nchunks;
	BlockNumber blkno = InvalidBlockNumber;
	OffsetNumber off = InvalidOffsetNumber;
	bool		ends_with_prev;
	int			on_page = 0;
	const char *data = NULL;

	Assert(!reader->locked);

	/* Where the previous value's chunks suggest this one starts. */
	if (reader->guess_valid && reader->guess < reader->toast_nblocks &&
		!(reader->guesses >= GUESS_TRIAL && reader->guess_hits * 2 < reader->guesses))
	{
		reader->guesses++;
		blkno = reader->guess;
		data = chunk0_on_page(reader, blkno, InvalidOffsetNumber, reader->next_off,
							  valueid, len, &off, &on_page, &ends_with_prev);
		if (data == NULL && ends_with_prev && blkno + 1 < reader->toast_nblocks)
		{
			blkno++;
			data = chunk0_on_page(reader, blkno, InvalidOffsetNumber,
								  FirstOffsetNumber, valueid, len, &off,
								  &on_page, &ends_with_prev);
		}
		if (data != NULL)
			reader->guess_hits++;
	}

	/* Otherwise the index. */
	if (data == NULL)
	{
		ScanKeyData keys[2];
		ItemPointer tid;

		ScanKeyInit(&keys[0], (AttrNumber) 1, BTEqualStrategyNumber, F_OIDEQ,
					ObjectIdGetDatum(valueid));
		ScanKeyInit(&keys[1], (AttrNumber) 2, BTEqualStrategyNumber, F_INT4EQ,
					Int32GetDatum(0));
		index_rescan(reader->scan, keys, 2, NULL, 0);
		while (data == NULL &&
			   (tid = index_getnext_tid(reader->scan, ForwardScanDirection)) != NULL)
		{
			blkno = ItemPointerGetBlockNumber(tid);
			data = chunk0_on_page(reader, blkno, ItemPointerGetOffsetNumber(tid),
								  InvalidOffsetNumber, valueid, len, &off,
								  &on_page, &ends_with_prev);
		}
	}
	if (data == NULL)
	{
		reader->guess_valid = false;
		return NULL;
	}

	/*
	 * Where this value's last chunk, and so most likely the next value's
	 * chunk 0, is: its chunks were written consecutively, on_page of them on
	 * this page, the rest EXTERN_TUPLES_PER_PAGE full chunks a page; the next
	 * value starts on the last chunk's page if a full chunk still fits there
	 * (right after this value's chunks when that is this page).
	 */
	nchunks = (VARATT_EXTERNAL_GET_EXTSIZE(*toast_pointer) + TOAST_MAX_CHUNK_SIZE - 1) /
		TOAST_MAX_CHUNK_SIZE;
	if (on_page >= nchunks)
	{
		reader->guess = blkno;
		reader->next_off = off + on_page;
	}
	else
	{
		int32		rest = nchunks - on_page;
		int32		last_len = VARATT_EXTERNAL_GET_EXTSIZE(*toast_pointer) -
			(nchunks - 1) * TOAST_MAX_CHUNK_SIZE;
		Size		used = ((rest - 1) % EXTERN_TUPLES_PER_PAGE) *
			chunk_tuple_space(TOAST_MAX_CHUNK_SIZE) + chunk_tuple_space(last_len);

		reader->guess = blkno + 1 + (rest - 1) / EXTERN_TUPLES_PER_PAGE;
		reader->next_off = FirstOffsetNumber + (rest - 1) % EXTERN_TUPLES_PER_PAGE + 1;
		if (BLCKSZ - SizeOfPageHeaderData - used < chunk_tuple_space(TOAST_MAX_CHUNK_SIZE))
		{
			reader->guess++;
			reader->next_off = FirstOffsetNumber;
		}
	}
	reader->prev_valueid = valueid;
	reader->prev_last_seq = nchunks - 1;
	reader->guess_valid = true;
	return data;
}

/*
 * storagelab_toast_chunk_done
 *		Release the share lock storagelab_toast_first_chunk() left on the
 *		TOAST page (the page stays pinned for the next value).
 */
void
storagelab_toast_chunk_done(ToastReader *reader)
{
	Assert(reader->locked);
	LockBuffer(reader->buffer, BUFFER_LOCK_UNLOCK);
	reader->locked = false;
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
	reader->buffer = InvalidBuffer;
	reader->locked = false;
	reader->next_off = FirstOffsetNumber;
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
 *		Unpin the last TOAST page, end the index scan and close the TOAST
 *		table and index.
 */
void
storagelab_toast_reader_close(ToastReader *reader)
{
	if (BufferIsValid(reader->buffer))
		ReleaseBuffer(reader->buffer);
	index_endscan(reader->scan);
	index_close(reader->toastidx, AccessShareLock);
	table_close(reader->toastrel, AccessShareLock);
	pfree(reader);
}
