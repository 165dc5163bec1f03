/*-------------------------------------------------------------------------
 *
 * read_stream_probe.c
 *	  A test hook for the read stream API that compat.h provides on every
 *	  PostgreSQL major.
 *
 * storagelab_read_stream_probe(regclass, int8[]) is not part of the
 * extension's SQL API (nothing in extension/ creates it, and binding a C
 * function to it takes a superuser).  test/read_stream.sql binds it in
 * pg_temp and checks, on every major the matrix runs, that a read stream
 * returns the blocks asked for, in order, with the contents pageinspect
 * sees.  It reads the way page readers must: after
 * storagelab_open_heap_relation(), through a BAS_BULKREAD strategy, one
 * share-locked page at a time, never writing.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "utils/array.h"
#include "utils/rel.h"
#include "utils/tuplestore.h"

#include "compat.h"
#include "storagelab.h"

PG_FUNCTION_INFO_V1(storagelab_read_stream_probe);

/* blkno, tagged_blkno, normal_items */
static const Oid probe_result_types[] = {INT8OID, INT8OID, INT4OID};

/* The callback state for an explicit list of blocks. */
typedef struct ProbeBlockList
{
	BlockNumber *blocks;
	int			nblocks;
	int			next;
} ProbeBlockList;

/*
 * probe_block_list_cb
 *		Read stream callback returning the listed blocks in order; it tags
 *		each with its block number in the per-buffer data, so that the probe
 *		can show that per-buffer data travels with its buffer.
 */
static BlockNumber
probe_block_list_cb(ReadStream *stream, void *callback_private_data,
					void *per_buffer_data)
{
	ProbeBlockList *list = callback_private_data;
	BlockNumber blkno;

	if (list->next >= list->nblocks)
		return InvalidBlockNumber;

	blkno = list->blocks[list->next++];
	*(BlockNumber *) per_buffer_data = blkno;

	return blkno;
}

/*
 * storagelab_read_stream_probe
 *		For each block a read stream returns (all blocks of the relation's
 *		main fork when the array is NULL, else the listed ones, in order):
 *		its block number, the block number tagged in its per-buffer data
 *		(NULL for all blocks), and its count of LP_NORMAL line pointers.
 */
Datum
storagelab_read_stream_probe(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			relid;
	Relation	rel;
	BlockNumber nblocks;
	BufferAccessStrategy strategy;
	ReadStream *stream;
	BlockRangeReadStreamPrivate range;
	ProbeBlockList list = {0};
	bool		listed = !PG_ARGISNULL(1);
	Buffer		buf;
	void	   *per_buffer_data;

	InitMaterializedSRF(fcinfo, 0);
	SL_CHECK_RESULT(rsinfo->setDesc, probe_result_types, "storagelab_read_stream_probe");

	/* No relation, no blocks. */
	if (PG_ARGISNULL(0))
		return (Datum) 0;
	relid = PG_GETARG_OID(0);

	rel = storagelab_open_heap_relation(relid,
										SL_ALLOW_TABLE | SL_ALLOW_MATVIEW | SL_ALLOW_TOAST,
										"storagelab_read_stream_probe");
	nblocks = RelationGetNumberOfBlocks(rel);

	if (listed)
	{
		ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(1);
		Datum	   *elems;
		bool	   *nulls;
		int			n;

		deconstruct_array(arr, INT8OID, sizeof(int64), FLOAT8PASSBYVAL,
						  TYPALIGN_DOUBLE, &elems, &nulls, &n);
		list.blocks = palloc(sizeof(BlockNumber) * Max(n, 1));
		for (int i = 0; i < n; i++)
		{
			int64		b = nulls[i] ? -1 : DatumGetInt64(elems[i]);

			if (b < 0 || b >= (int64) nblocks)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("block number %lld is out of range for relation \"%s\"",
								(long long) b, RelationGetRelationName(rel)),
						 errdetail("The relation has %u blocks.", nblocks),
						 errhint("Pass block numbers from 0 to the number of blocks minus one.")));
			list.blocks[i] = (BlockNumber) b;
		}
		list.nblocks = n;
	}
	range.current_blocknum = 0;
	range.last_exclusive = nblocks;

	strategy = GetAccessStrategy(BAS_BULKREAD);
	if (listed)
		stream = read_stream_begin_relation(READ_STREAM_DEFAULT, strategy, rel,
											MAIN_FORKNUM, probe_block_list_cb,
											&list, sizeof(BlockNumber));
	else
		stream = read_stream_begin_relation(READ_STREAM_FULL, strategy, rel,
											MAIN_FORKNUM, block_range_read_stream_cb,
											&range, 0);

	while ((buf = read_stream_next_buffer(stream, &per_buffer_data)) != InvalidBuffer)
	{
		Page		page;
		OffsetNumber maxoff;
		int32		normal = 0;
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		CHECK_FOR_INTERRUPTS();

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		maxoff = PageIsNew(page) ? InvalidOffsetNumber : PageGetMaxOffsetNumber(page);
		for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
		{
			if (ItemIdIsNormal(PageGetItemId(page, off)))
				normal++;
		}
		values[0] = Int64GetDatum((int64) BufferGetBlockNumber(buf));
		UnlockReleaseBuffer(buf);

		if (listed)
			values[1] = Int64GetDatum((int64) *(BlockNumber *) per_buffer_data);
		else
			nulls[1] = true;
		values[2] = Int32GetDatum(normal);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

	read_stream_end(stream);
	FreeAccessStrategy(strategy);
	relation_close(rel, AccessShareLock);

	return (Datum) 0;
}
