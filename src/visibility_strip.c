/*-------------------------------------------------------------------------
 *
 * visibility_strip.c
 *	  Where in a table its all-visible and all-frozen pages are: the
 *	  visibility map cut into equal runs of pages, for the strips of
 *	  storagelab.report_html().
 *
 * Backs storagelab_internal.visibility_map_strip(relation regclass,
 * cells integer).  Reads only visibility-map bits (visibilitymap_get_status:
 * one map page covers 32,672 heap pages), never a heap page, never waits for
 * a lock, and reads at most VM_STRIP_SAMPLE bits per cell, evenly spaced, so
 * that a table of any size costs at most cells * VM_STRIP_SAMPLE bit reads.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/visibilitymap.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/array.h"
#include "utils/rel.h"

#include "storagelab.h"

PG_FUNCTION_INFO_V1(storagelab_visibility_map_strip);

/* pages, pages_read, all_visible, all_frozen */
static const Oid strip_result_types[] = {INT8OID, INT4ARRAYOID, INT4ARRAYOID, INT4ARRAYOID};

/* At most this many bits read per cell (evenly spaced over its pages). */
#define VM_STRIP_SAMPLE 256

/* Largest number of cells a strip may have. */
#define VM_STRIP_MAX_CELLS 1000

/*
 * storagelab_visibility_map_strip
 *		visibility_map_strip(relation regclass, cells integer,
 *							 OUT pages bigint, OUT pages_read integer[],
 *							 OUT all_visible integer[], OUT all_frozen integer[])
 *
 * Cuts the table's pages into min(cells, pages) runs of (nearly) equal
 * length and reports, per run, how many of the pages read were all-visible
 * and how many all-frozen; pages_read is how many were read per run (all
 * of its pages when it has at most VM_STRIP_SAMPLE).  An empty table has
 * no runs (empty arrays).
 * NULL when the table is locked, dropped, or cannot be read here (another
 * session's temporary table, unlogged on a standby), as
 * visibility_map_count() does; the caller needs pg_stat_scan_tables and
 * SELECT on the table (42501 otherwise).
 */
Datum
storagelab_visibility_map_strip(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	int32		cells = PG_GETARG_INT32(1);
	TupleDesc	tupdesc;
	Relation	rel;
	SlOpenStatus status;
	BlockNumber nblocks;
	Buffer		vmbuf = InvalidBuffer;
	Datum	   *visible;
	Datum	   *frozen;
	Datum	   *read;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	int			c;

	tupdesc = SL_RESULT_DESC(fcinfo, strip_result_types, "visibility_map_strip");
	if (cells < 1 || cells > VM_STRIP_MAX_CELLS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cells must be between 1 and %d: %d", VM_STRIP_MAX_CELLS, cells),
				 errhint("Pass a number of cells between 1 and %d.", VM_STRIP_MAX_CELLS)));

	rel = storagelab_open_heap_relation_ext(relid,
											SL_ALLOW_TABLE | SL_ALLOW_MATVIEW |
											SL_NOWAIT | SL_SKIP_UNREADABLE,
											"visibility_map_strip", &status);
	if (rel == NULL)
		PG_RETURN_NULL();

	nblocks = RelationGetNumberOfBlocks(rel);
	if ((BlockNumber) cells > nblocks)
		cells = (int32) nblocks;
	visible = palloc0(sizeof(Datum) * Max(cells, 1));
	frozen = palloc0(sizeof(Datum) * Max(cells, 1));
	read = palloc0(sizeof(Datum) * Max(cells, 1));

	for (c = 0; c < cells; c++)
	{
		/* run c holds the pages [first, last) */
		BlockNumber first = (BlockNumber) ((uint64) nblocks * c / cells);
		BlockNumber last = (BlockNumber) ((uint64) nblocks * (c + 1) / cells);
		BlockNumber len = last - first;
		int			reads = (int) Min(len, VM_STRIP_SAMPLE);
		int32		nvisible = 0;
		int32		nfrozen = 0;
		int			i;

		CHECK_FOR_INTERRUPTS();
		for (i = 0; i < reads; i++)
		{
			BlockNumber blkno = first + (BlockNumber) ((uint64) len * i / reads);
			uint8		bits = visibilitymap_get_status(rel, blkno, &vmbuf);

			if (bits & VISIBILITYMAP_ALL_VISIBLE)
				nvisible++;
			if (bits & VISIBILITYMAP_ALL_FROZEN)
				nfrozen++;
		}
		read[c] = Int32GetDatum(reads);
		visible[c] = Int32GetDatum(nvisible);
		frozen[c] = Int32GetDatum(nfrozen);
	}
	if (BufferIsValid(vmbuf))
		ReleaseBuffer(vmbuf);
	relation_close(rel, AccessShareLock);

	values[0] = Int64GetDatum((int64) nblocks);
	values[1] = PointerGetDatum(construct_array(read, cells, INT4OID, 4, true, TYPALIGN_INT));
	values[2] = PointerGetDatum(construct_array(visible, cells, INT4OID, 4, true, TYPALIGN_INT));
	values[3] = PointerGetDatum(construct_array(frozen, cells, INT4OID, 4, true, TYPALIGN_INT));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
