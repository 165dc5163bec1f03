/*-------------------------------------------------------------------------
 *
 * toast_profile.c
 *	  Census of how a column's values are stored: NULL, inline (short or
 *	  long header, compressed or not) or out of line in the TOAST table
 *	  (compressed or not, with which method), read from the heap pages.
 *
 * Backs storagelab_internal.toast_census(regclass, name, integer), which the SQL
 * function storagelab.toast_profile() wraps with its recommendation, and
 * storagelab_internal.toast_lock_nowait(regclass), with which the bytea_storage view
 * skips tables it cannot lock without waiting.
 *
 * Sizes and compression are taken from each value's varlena header or TOAST
 * pointer only (toast_raw_datum_size = octet_length + 4,
 * toast_datum_size = pg_column_size); no value is ever detoasted whole.
 * Content sniffing (src/content_type.c) looks at the first SL_SNIFF_PREFIX
 * bytes: read in place for inline plain values, decompressed partially from
 * the page for inline compressed ones, read from the first TOAST chunk
 * (src/toast_reader.c) for external uncompressed values and external pglz
 * values (whose prefix is decompressed from that chunk).  The TOAST pointers
 * of a heap page are fetched after its lock is released, in value-id order
 * (the order their chunks were written in).
 * External lz4 values cannot be decompressed partially without fetching the
 * whole value (lz4 offers no bound on the input a prefix needs), so they are
 * not sniffed and are counted in unsniffed_values.
 *
 * Which tuple versions count: those visible to the calling statement's
 * snapshot, i.e. exactly the rows a SELECT in the same statement would see.
 * HeapTupleSatisfiesMVCC cannot be used because it sets hint bits; instead
 * storagelab_tuple_visible() (xid_status.c) follows the same rules from
 * t_infomask and, where a hint bit is missing, asks
 * TransactionIdIsCurrentTransactionId, XidInMVCCSnapshot and the commit
 * log -- and never writes anything.
 *
 * The reader never writes: no hint bits, no pruning, no dirtied buffer.
 * Pages are read with a BAS_BULKREAD strategy under a share lock, one at a
 * time; the lock is released before any TOAST fetch.  Memory is constant:
 * the census carries fixed-size buffers for one page's TOAST pointers and
 * one decompressed prefix, and a per-page memory context (used only by inline lz4
 * prefixes) is reset after each page.  No value is copied off the page
 * whole; per value, the work is its header, at most SL_SNIFF_PREFIX bytes
 * of prefix, and at most one TOAST page for an out-of-line value.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/heapam.h"
#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "access/multixact.h"
#include "access/relation.h"
#include "access/toast_compression.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/pg_attribute.h"
#include "common/pg_lzcompress.h"
#include "executor/instrument.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "compat.h"
#include "content_type.h"
#include "storagelab.h"
#include "toast_reader.h"

PG_FUNCTION_INFO_V1(storagelab_toast_census);
PG_FUNCTION_INFO_V1(storagelab_toast_lock_nowait);

/* Number of output columns of storagelab_internal.toast_census(). */
#define TOAST_CENSUS_COLS	31

/* What storagelab_toast_census() reads and builds (part 40's declaration). */
static const Oid census_arg_types[] = {REGCLASSOID, NAMEOID, INT4OID};
static const Oid census_result_types[TOAST_CENSUS_COLS] = {
	INT8OID, INT8OID, INT8OID, BOOLOID, /* rows_scanned .. sampled */
	INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID,
	INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID,
	INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, /* null_values .. */
	JSONBOID, FLOAT8OID,		/* content_types, prefix_entropy */
	INT8OID, INT8OID, BOOLOID	/* toast_values_fetched .. lz4_available */
};

/*
 * A value whose octet_length reaches this is "large": big enough that
 * PostgreSQL tries to compress it or move it out of line whatever the rest
 * of its row (about 2 kB with 8 kB pages).  Smaller values stored
 * compressed or out of line count as large too (census_value()).
 */
#define LARGE_VALUE_BYTES	TOAST_TUPLE_THRESHOLD

/* Running totals of one census. */
typedef struct ToastCensus
{
	int64		rows_scanned;
	int64		pages_scanned;
	int64		null_values;
	int64		inline_uncompressed;
	int64		inline_short;
	int64		inline_compressed;
	int64		external_uncompressed;
	int64		external_compressed;
	int64		pglz_values;
	int64		lz4_values;
	int64		raw_bytes;
	int64		stored_bytes;
	int64		compressed_raw_bytes;
	int64		compressed_stored_bytes;
	int64		ratio_buckets[4];	/* stored/raw: <=.25, <=.5, <=.75, >.75 */
	int64		large_values;
	int64		large_incompressible;
	int64		large_compressed;
	int64		sniffed_values;
	int64		unsniffed_values;
	int64		incompressible_values;
	double		entropy_sum;
	int64		entropy_values;
	int64		toast_values_fetched;
	int64		toast_buffers_accessed;
	int64		content_counts[SL_CT_NUM_TYPES];
} ToastCensus;

/*
 * An out-of-line value seen on a heap page, to be sniffed from its first
 * TOAST chunk once the page lock is released.
 */
typedef struct PendingFetch
{
	struct varatt_external pointer;
	bool		large;
} PendingFetch;

/* What census_page() needs besides the census, allocated once per call. */
typedef struct CensusBuffers
{
	PendingFetch pending[MaxHeapTuplesPerPage];
	char		prefix[SL_SNIFF_PREFIX];
} CensusBuffers;

/*
 * sniff_prefix
 *		Classify one value from its first len bytes and add it to the census.
 */
static void
sniff_prefix(ToastCensus *census, const unsigned char *buf, int len, bool large)
{
	double		entropy;
	SlContentType type = storagelab_sniff_prefix(buf, len, &entropy);

	census->sniffed_values++;
	census->content_counts[type]++;
	if (len >= SL_ENTROPY_MIN_LEN)
	{
		census->entropy_sum += entropy;
		census->entropy_values++;
	}
	if (storagelab_content_type_incompressible(type))
	{
		census->incompressible_values++;
		if (large)
			census->large_incompressible++;
	}
}

/*
 * inline_compressed_prefix
 *		Decompress the first bytes (at most SL_SNIFF_PREFIX) of an inline
 *		compressed value into prefix, reading the value where it is (on the
 *		share-locked page); returns how many bytes were decompressed.  pglz
 *		is decompressed straight into prefix; lz4 (or any other method)
 *		through the core's slice functions, whose result goes to the per-page
 *		memory context.
 */
static int
inline_compressed_prefix(struct varlena *value, char *prefix)
{
	int32		rawwant = Min(SL_SNIFF_PREFIX,
							  (int32) VARDATA_COMPRESSED_GET_EXTSIZE(value));
	int32		got;

	if (VARDATA_COMPRESSED_GET_COMPRESS_METHOD(value) == TOAST_PGLZ_COMPRESSION_ID)
	{
		got = pglz_decompress((char *) value + VARHDRSZ_COMPRESSED,
							  VARSIZE(value) - VARHDRSZ_COMPRESSED,
							  prefix, rawwant, false);
		if (got < 0)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg_internal("compressed pglz data is corrupt")));
	}
	else
	{
		struct varlena *slice;

		if (VARDATA_COMPRESSED_GET_COMPRESS_METHOD(value) == TOAST_LZ4_COMPRESSION_ID)
			slice = lz4_decompress_datum_slice(value, rawwant);
		else
			slice = detoast_attr_slice(value, 0, rawwant);	/* any other method */
		got = Min(rawwant, (int32) VARSIZE_ANY_EXHDR(slice));
		memcpy(prefix, VARDATA_ANY(slice), got);
	}
	return got;
}

/*
 * census_value
 *		Add one non-NULL value, still on the share-locked page, to the
 *		census from its header.  Inline values are sniffed in place (inline
 *		compressed ones from a prefix decompressed into bufs->prefix).  An
 *		out-of-line value that can be sniffed has its TOAST pointer copied
 *		into *pending, to be fetched after the page lock is released; returns
 *		whether it was.
 */
static bool
census_value(ToastCensus *census, Datum datum, CensusBuffers *bufs,
			 PendingFetch *pending)
{
	struct varlena *value = (struct varlena *) DatumGetPointer(datum);
	int64		raw;
	int64		stored;
	bool		large;
	bool		compressed = false;
	int			method = -1;
	struct varatt_external toast_pointer;

	if (VARATT_IS_EXTERNAL_ONDISK(value))
	{
		VARATT_EXTERNAL_GET_POINTER(toast_pointer, value);
		raw = toast_pointer.va_rawsize - VARHDRSZ;
		stored = VARATT_EXTERNAL_GET_EXTSIZE(toast_pointer);
		if (VARATT_EXTERNAL_IS_COMPRESSED(toast_pointer))
		{
			census->external_compressed++;
			compressed = true;
			method = VARATT_EXTERNAL_GET_COMPRESS_METHOD(toast_pointer);
		}
		else
			census->external_uncompressed++;
	}
	else if (VARATT_IS_EXTERNAL(value))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("unexpected in-memory TOAST pointer on a heap page"),
				 errdetail("Only on-disk TOAST pointers can be stored in a table.")));
	else if (VARATT_IS_COMPRESSED(value))
	{
		census->inline_compressed++;
		compressed = true;
		method = VARDATA_COMPRESSED_GET_COMPRESS_METHOD(value);
		raw = VARDATA_COMPRESSED_GET_EXTSIZE(value);
		stored = VARSIZE(value);
	}
	else
	{
		raw = VARSIZE_ANY_EXHDR(value);
		stored = VARSIZE_ANY(value);
		census->inline_uncompressed++;
		if (VARATT_IS_SHORT(value))
			census->inline_short++;
	}

	/* The same numbers as toast_raw_datum_size() - VARHDRSZ and toast_datum_size(). */
	Assert(raw == (int64) toast_raw_datum_size(datum) - VARHDRSZ);
	Assert(stored == (int64) toast_datum_size(datum));
	/*
	 * Large: big enough for the toaster to act on alone, or acted on already.
	 * A row over TOAST_TUPLE_THRESHOLD has its values compressed or moved out
	 * of line, biggest first, until it fits: in a wide row (three text
	 * columns of 1-2 kB, say) values far under the threshold are compressed
	 * too, and storage settings decide how.
	 */
	large = raw >= LARGE_VALUE_BYTES || compressed ||
		VARATT_IS_EXTERNAL_ONDISK(value);
	census->raw_bytes += raw;
	census->stored_bytes += stored;
	if (large)
		census->large_values++;

	if (compressed)
	{
		double		fraction = raw > 0 ? (double) stored / raw : 1.0;

		census->compressed_raw_bytes += raw;
		census->compressed_stored_bytes += stored;
		if (large)
			census->large_compressed++;
		if (method == TOAST_PGLZ_COMPRESSION_ID)
			census->pglz_values++;
		else if (method == TOAST_LZ4_COMPRESSION_ID)
			census->lz4_values++;
		census->ratio_buckets[fraction <= 0.25 ? 0 :
							  fraction <= 0.50 ? 1 :
							  fraction <= 0.75 ? 2 : 3]++;
	}

	if (!VARATT_IS_EXTERNAL_ONDISK(value))
	{
		if (compressed)
			sniff_prefix(census, (const unsigned char *) bufs->prefix,
						 inline_compressed_prefix(value, bufs->prefix), large);
		else
			sniff_prefix(census, (const unsigned char *) VARDATA_ANY(value),
						 (int) Min(raw, SL_SNIFF_PREFIX), large);
		return false;
	}

	/* External lz4: a prefix would cost a fetch of the whole value. */
	if (compressed && method != TOAST_PGLZ_COMPRESSION_ID)
	{
		census->unsniffed_values++;
		return false;
	}

	VARATT_EXTERNAL_GET_POINTER(pending->pointer, value);
	pending->large = large;
	return true;
}

/*
 * pending_cmp
 *		qsort comparator: PendingFetch by TOAST value id.
 */
static int
pending_cmp(const void *a, const void *b)
{
	Oid			va = ((const PendingFetch *) a)->pointer.va_valueid;
	Oid			vb = ((const PendingFetch *) b)->pointer.va_valueid;

	return va < vb ? -1 : va > vb ? 1 : 0;
}

/*
 * sniff_pending
 *		Sniff an out-of-line value from its first SL_SNIFF_PREFIX bytes, read
 *		in place from its first TOAST chunk under the TOAST page's share lock
 *		(a pglz prefix is decompressed from it first, and the lock released
 *		before sniffing).  Counts the buffers the TOAST read touched.  Runs
 *		without any heap page lock held.
 */
static void
sniff_pending(ToastCensus *census, ToastReader *reader, PendingFetch *pending,
			  CensusBuffers *bufs)
{
	struct varatt_external *toast_pointer = &pending->pointer;
	int64		before;
	const char *chunk;
	int			len;

	if (reader == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("TOAST pointer found in a table without a TOAST table")));

	if (toast_pointer->va_toastrelid != storagelab_toast_reader_relid(reader))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("TOAST pointer to relation %u found in a table whose TOAST table is %s",
						toast_pointer->va_toastrelid, storagelab_toast_reader_relname(reader)),
				 errdetail("PostgreSQL copies values into a table's own TOAST table when it stores them.")));
	before = pgBufferUsage.shared_blks_hit + pgBufferUsage.shared_blks_read +
		pgBufferUsage.local_blks_hit + pgBufferUsage.local_blks_read;
	chunk = storagelab_toast_first_chunk(reader, toast_pointer, &len);
	census->toast_values_fetched++;
	census->toast_buffers_accessed +=
		pgBufferUsage.shared_blks_hit + pgBufferUsage.shared_blks_read +
		pgBufferUsage.local_blks_hit + pgBufferUsage.local_blks_read - before;

	if (chunk == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("missing chunk number 0 for toast value %u in %s",
						toast_pointer->va_valueid,
						storagelab_toast_reader_relname(reader))));

	/* The chunk is on the share-locked TOAST page: sniff it there. */
	if (VARATT_EXTERNAL_IS_COMPRESSED(*toast_pointer))
	{
		/* The chunks hold va_tcinfo (4 bytes), then the pglz stream. */
		int32		rawwant = Min(SL_SNIFF_PREFIX, toast_pointer->va_rawsize - VARHDRSZ);
		int			hdr = VARHDRSZ_COMPRESSED - VARHDRSZ;
		int32		got;

		got = len > hdr ? pglz_decompress(chunk + hdr, len - hdr, bufs->prefix,
										  rawwant, false) : -1;
		storagelab_toast_chunk_done(reader);
		if (got < 0)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("compressed pglz data is corrupt in toast value %u",
							toast_pointer->va_valueid)));
		sniff_prefix(census, (const unsigned char *) bufs->prefix, got, pending->large);
	}
	else
	{
		sniff_prefix(census, (const unsigned char *) chunk,
					 Min(len, SL_SNIFF_PREFIX), pending->large);
		storagelab_toast_chunk_done(reader);
	}
}

/*
 * census_page
 *		Count the visible tuples of one heap page: share-lock it, read the
 *		column's header facts and sniff inline values in place, note the
 *		TOAST pointers still to sniff, unlock, then fetch their first chunks
 *		in value-id order (the order toast_save_datum() wrote them in, so
 *		consecutive fetches tend to hit the same or the next TOAST page).
 */
static void
census_page(ToastCensus *census, ToastReader *reader, Relation rel,
			BlockNumber blkno, AttrNumber attnum, BufferAccessStrategy strategy,
			Snapshot snapshot, CensusBuffers *bufs)
{
	TupleDesc	tupdesc = RelationGetDescr(rel);
	Buffer		buffer;
	Page		page;
	OffsetNumber maxoff;
	OffsetNumber offnum;
	int			npending = 0;
	int			i;

	buffer = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buffer);
	census->pages_scanned++;

	if (PageIsNew(page) || PageIsEmpty(page))
	{
		UnlockReleaseBuffer(buffer);
		return;
	}

	maxoff = PageGetMaxOffsetNumber(page);
	for (offnum = FirstOffsetNumber; offnum <= maxoff; offnum = OffsetNumberNext(offnum))
	{
		ItemId		itemid = PageGetItemId(page, offnum);
		HeapTupleData tuple;
		Datum		datum;
		bool		isnull;

		if (!ItemIdIsNormal(itemid))
			continue;

		tuple.t_data = (HeapTupleHeader) PageGetItem(page, itemid);
		tuple.t_len = ItemIdGetLength(itemid);
		tuple.t_tableOid = RelationGetRelid(rel);
		ItemPointerSet(&tuple.t_self, blkno, offnum);

		if (!storagelab_tuple_visible(tuple.t_data, snapshot))
			continue;

		census->rows_scanned++;
		datum = heap_getattr(&tuple, attnum, tupdesc, &isnull);
		if (isnull)
		{
			census->null_values++;
			continue;
		}
		Assert(npending < MaxHeapTuplesPerPage);
		if (census_value(census, datum, bufs, &bufs->pending[npending]))
			npending++;
	}
	UnlockReleaseBuffer(buffer);

	if (npending > 1)
		qsort(bufs->pending, npending, sizeof(PendingFetch), pending_cmp);
	for (i = 0; i < npending; i++)
		sniff_pending(census, reader, &bufs->pending[i], bufs);
}

/*
 * sample_step
 *		A stride for visiting all nblocks pages in a scattered order: about
 *		0.618 * nblocks (so consecutive visits land far apart) and coprime
 *		with nblocks (so the walk i * step mod nblocks visits every page once).
 */
static BlockNumber
sample_step(BlockNumber nblocks)
{
	uint64		step;

	if (nblocks <= 2)
		return 1;
	step = (uint64) (nblocks * 0.6180339887);
	if (step == 0)
		step = 1;
	for (;;)
	{
		uint64		a = nblocks,
					b = step;

		while (b != 0)
		{
			uint64		t = a % b;

			a = b;
			b = t;
		}
		if (a == 1)
			return (BlockNumber) step;
		step++;
	}
}

/*
 * content_types_jsonb
 *		The per-type counts as a jsonb object, types with a zero count left
 *		out.
 */
static Datum
content_types_jsonb(ToastCensus *census)
{
	StringInfoData buf;
	bool		first = true;
	int			i;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	for (i = 0; i < SL_CT_NUM_TYPES; i++)
	{
		if (census->content_counts[i] == 0)
			continue;
		appendStringInfo(&buf, "%s\"%s\": " INT64_FORMAT, first ? "" : ", ",
						 storagelab_content_type_name((SlContentType) i),
						 census->content_counts[i]);
		first = false;
	}
	appendStringInfoChar(&buf, '}');
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data));
}

/*
 * census_column
 *		The attribute number of column_name in rel, which must be a user
 *		column of a variable-length type; a clear error otherwise.
 */
static AttrNumber
census_column(Relation rel, const char *colname)
{
	AttrNumber	attnum = get_attnum(RelationGetRelid(rel), colname);
	Form_pg_attribute attr;

	if (attnum == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist",
						colname, RelationGetRelationName(rel)),
				 errhint("Pass the name of one of the table's columns, as stored (case-sensitive).")));
	if (attnum < 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot profile system column \"%s\"", colname),
				 errhint("Pass a user column of variable length, such as bytea, text or jsonb.")));
	attr = TupleDescAttr(RelationGetDescr(rel), attnum - 1);
	if (attr->attlen != -1)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column \"%s\" of relation \"%s\" is not of a variable-length type",
						colname, RelationGetRelationName(rel)),
				 errdetail("Its type %s is never stored in TOAST.",
						   format_type_be(attr->atttypid)),
				 errhint("Pass a column of a varlena type, such as bytea, text or jsonb.")));
	return attnum;
}

/*
 * census_pages
 *		Count column attnum of rel's first nblocks pages into census: every
 *		page (sample_rows < 0), or pages in a scattered order until at least
 *		sample_rows visible rows have been counted.  A BAS_BULKREAD ring, the
 *		active snapshot, one page's memory at a time.
 */
static void
census_pages(ToastCensus *census, Relation rel, AttrNumber attnum, BlockNumber nblocks,
			 int64 sample_rows)
{
	Snapshot	snapshot = GetActiveSnapshot();
	BufferAccessStrategy strategy = GetAccessStrategy(BAS_BULKREAD);
	MemoryContext page_cxt;
	ToastReader *reader;
	CensusBuffers *bufs;
	BlockNumber step;

	page_cxt = AllocSetContextCreate(CurrentMemoryContext,
									 "storagelab toast_profile page",
									 ALLOCSET_DEFAULT_SIZES);
	bufs = palloc(sizeof(CensusBuffers));
	reader = storagelab_toast_reader_open(rel, snapshot, strategy);
	step = sample_rows < 0 ? 1 : sample_step(nblocks);

	for (BlockNumber i = 0; i < nblocks; i++)
	{
		BlockNumber blkno = (BlockNumber) (((uint64) i * step) % nblocks);
		MemoryContext old_cxt;

		if (sample_rows >= 0 && census->rows_scanned >= sample_rows)
			break;
		CHECK_FOR_INTERRUPTS();
		old_cxt = MemoryContextSwitchTo(page_cxt);
		census_page(census, reader, rel, blkno, attnum, strategy, snapshot, bufs);
		MemoryContextSwitchTo(old_cxt);
		MemoryContextReset(page_cxt);
	}
	MemoryContextDelete(page_cxt);
	pfree(bufs);
	if (reader != NULL)
		storagelab_toast_reader_close(reader);
	FreeAccessStrategy(strategy);
}

/*
 * census_result
 *		The census as toast_census()'s result row (result_desc), nblocks the
 *		relation's pages.
 */
static Datum
census_result(ToastCensus *census, BlockNumber nblocks, TupleDesc result_desc)
{
	Datum		values[TOAST_CENSUS_COLS];
	bool		nulls[TOAST_CENSUS_COLS];
	int			col = 0;

	memset(nulls, 0, sizeof(nulls));
	values[col++] = Int64GetDatum(census->rows_scanned);
	values[col++] = Int64GetDatum(census->pages_scanned);
	values[col++] = Int64GetDatum((int64) nblocks);
	values[col++] = BoolGetDatum(census->pages_scanned < (int64) nblocks);
	values[col++] = Int64GetDatum(census->null_values);
	values[col++] = Int64GetDatum(census->inline_uncompressed);
	values[col++] = Int64GetDatum(census->inline_short);
	values[col++] = Int64GetDatum(census->inline_compressed);
	values[col++] = Int64GetDatum(census->external_uncompressed);
	values[col++] = Int64GetDatum(census->external_compressed);
	values[col++] = Int64GetDatum(census->pglz_values);
	values[col++] = Int64GetDatum(census->lz4_values);
	values[col++] = Int64GetDatum(census->raw_bytes);
	values[col++] = Int64GetDatum(census->stored_bytes);
	values[col++] = Int64GetDatum(census->compressed_raw_bytes);
	values[col++] = Int64GetDatum(census->compressed_stored_bytes);
	values[col++] = Int64GetDatum(census->ratio_buckets[0]);
	values[col++] = Int64GetDatum(census->ratio_buckets[1]);
	values[col++] = Int64GetDatum(census->ratio_buckets[2]);
	values[col++] = Int64GetDatum(census->ratio_buckets[3]);
	values[col++] = Int64GetDatum(census->large_values);
	values[col++] = Int64GetDatum(census->large_compressed);
	values[col++] = Int64GetDatum(census->large_incompressible);
	values[col++] = Int64GetDatum(census->sniffed_values);
	values[col++] = Int64GetDatum(census->unsniffed_values);
	values[col++] = Int64GetDatum(census->incompressible_values);
	values[col++] = content_types_jsonb(census);
	if (census->entropy_values > 0)
		values[col++] = Float8GetDatum(census->entropy_sum / census->entropy_values);
	else
	{
		nulls[col] = true;
		values[col++] = (Datum) 0;
	}
	values[col++] = Int64GetDatum(census->toast_values_fetched);
	values[col++] = Int64GetDatum(census->toast_buffers_accessed);
#ifdef USE_LZ4
	values[col++] = BoolGetDatum(true);
#else
	values[col++] = BoolGetDatum(false);
#endif
	Assert(col == TOAST_CENSUS_COLS);

	return HeapTupleGetDatum(heap_form_tuple(result_desc, values, nulls));
}

/*
 * storagelab_toast_census
 *		SQL: storagelab_internal.toast_census(relation regclass, column_name name,
 *		sample_rows integer) RETURNS record.
 *
 * Reads every page of relation (sample_rows NULL), or pages in a scattered
 * order until at least sample_rows visible rows have been counted (the last
 * page is read whole), and returns the census of column_name.  Takes
 * AccessShareLock on the relation; share-locks one heap page at a time;
 * never sets hint bits, prunes or dirties a buffer.
 */
Datum
storagelab_toast_census(PG_FUNCTION_ARGS)
{
	Oid			relid;
	char	   *colname;
	int64		sample_rows = -1;
	Relation	rel;
	AttrNumber	attnum;
	BlockNumber nblocks;
	ToastCensus census;
	TupleDesc	result_desc;

	SL_CHECK_ARGS(fcinfo, census_arg_types, "toast_census");
	result_desc = SL_RESULT_DESC(fcinfo, census_result_types, "toast_census");
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation and column_name must not be null"),
				 errhint("Pass a table and the name of one of its columns.")));
	relid = PG_GETARG_OID(0);
	colname = NameStr(*PG_GETARG_NAME(1));
	if (!PG_ARGISNULL(2))
	{
		sample_rows = PG_GETARG_INT32(2);
		if (sample_rows <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("sample_rows must be positive"),
					 errdetail("sample_rows was %lld.", (long long) sample_rows),
					 errhint("Pass NULL for an exact census of every row.")));
	}

	rel = storagelab_open_heap_relation(relid, SL_ALLOW_TABLE | SL_ALLOW_MATVIEW,
										"toast_profile");

	/*
	 * The census reads every row's value, also those a policy hides from the
	 * caller: its sizes and content types describe data, as pg_stats does,
	 * which hides a table's statistics under active row-level security too.
	 */
	storagelab_refuse_row_security(rel, "toast_profile",
								   "toast_profile() reads the values of every row, also those its policies hide from this role.");
	attnum = census_column(rel, colname);

	memset(&census, 0, sizeof(census));
	nblocks = RelationGetNumberOfBlocks(rel);
	census_pages(&census, rel, attnum, nblocks, sample_rows);
	relation_close(rel, AccessShareLock);

	PG_RETURN_DATUM(census_result(&census, nblocks, result_desc));
}

/*
 * storagelab_toast_lock_nowait
 *		SQL: storagelab_internal.toast_lock_nowait(relation regclass) RETURNS text
 *
 * Takes ACCESS SHARE -- the lock toast_profile() takes -- on relation, its
 * TOAST table and that table's indexes, without waiting.  Returns 'ok' when
 * all were granted (they are then held to the end of the transaction, as by
 * any query, so toast_profile() gets them without waiting), 'locked' when
 * another session holds a conflicting lock on one of them (ACCESS
 * EXCLUSIVE: ALTER TABLE, VACUUM FULL, CLUSTER, TRUNCATE, REINDEX, DROP...;
 * none of the locks taken here is kept), or 'unavailable' when the relation
 * no longer exists.  bytea_storage calls it before profiling a table so that
 * the view never queues behind a migration (and so never makes the queries
 * queued behind it wait longer).  Needs SELECT on the table, like
 * toast_profile().  Reads no page.
 */
Datum
storagelab_toast_lock_nowait(PG_FUNCTION_ARGS)
{
	Oid			relid;
	Relation	rel;
	Oid			toastrelid;
	List	   *locked = NIL;
	bool		granted = true;
	SlOpenStatus open_status;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	relid = PG_GETARG_OID(0);

	storagelab_check_scan_role();
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		PG_RETURN_TEXT_P(cstring_to_text("unavailable"));
	if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", get_rel_name(relid)),
				 errdetail("bytea_storage profiles the table as toast_profile() would, which requires SELECT privilege on the table."),
				 errhint("Grant SELECT on the table, or the role pg_read_all_data, to the calling role.")));

	rel = storagelab_try_open_nowait(relid, &open_status);
	if (rel == NULL)
		PG_RETURN_TEXT_P(cstring_to_text(open_status == SL_OPEN_LOCKED ?
										 "locked" : "unavailable"));
	toastrelid = rel->rd_rel->reltoastrelid;
	relation_close(rel, NoLock);

	if (OidIsValid(toastrelid))
	{
		if (!ConditionalLockRelationOid(toastrelid, AccessShareLock))
			granted = false;
		else
		{
			Relation	toastrel = relation_open(toastrelid, NoLock);
			List	   *indexes = RelationGetIndexList(toastrel);
			ListCell   *lc;

			locked = lappend_oid(locked, toastrelid);
			foreach(lc, indexes)
			{
				Oid			indexoid = lfirst_oid(lc);

				if (!ConditionalLockRelationOid(indexoid, AccessShareLock))
				{
					granted = false;
					break;
				}
				locked = lappend_oid(locked, indexoid);
			}
			list_free(indexes);
			relation_close(toastrel, NoLock);
		}
	}

	if (!granted)
	{
		ListCell   *lc;

		foreach(lc, locked)
			UnlockRelationOid(lfirst_oid(lc), AccessShareLock);
		UnlockRelationOid(relid, AccessShareLock);
		PG_RETURN_TEXT_P(cstring_to_text("locked"));
	}
	list_free(locked);
	PG_RETURN_TEXT_P(cstring_to_text("ok"));
}
