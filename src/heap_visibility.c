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
 * This file opens the relations to read (the relation, the leaves of a
 * partitioned table, or their TOAST relations), reads every page or a
 * BlockSampler sample of them through a read stream (read-ahead and I/O
 * combining on 17 and later; one ReadBufferExtended() per page on 15 and 16,
 * see compat.h) in a BAS_BULKREAD ring with CHECK_FOR_INTERRUPTS() per page, and turns the figures into the result
 * row with its advice.  Classifying a page, without changing it, is in
 * visibility_page.c; scaling a sample and its confidence intervals in
 * visibility_estimate.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/heapam.h"
#include "access/relation.h"
#include "access/transam.h"
#include "access/visibilitymap.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "commands/vacuum.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
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

/* What hv_run() reads and builds (the SQL declarations in part 30). */
static const Oid hv_arg_types[] = {REGCLASSOID, INT4OID};
static const Oid hv_result_types[] = {
	TEXTOID, TEXTOID,			/* advice, evidence */
	INT8OID, INT8OID, INT8OID, INT8OID, /* pages .. all_frozen_pages */
	/* the HV_NUM_FIGURES figures, in HvFigure order */
	INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID,
	INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID,
	INT4OID, INT4OID, JSONBOID	/* oldest_unfrozen_xid_age, relations, ci95 */
};

/* Seed of the page sample: the same relation gives the same sample. */
#define HV_SAMPLE_SEED	0x5eed

/*
 * hv_sample_next_block
 *		Read stream callback: the next block of the BlockSampler passed as
 *		callback_private_data, or InvalidBlockNumber when it has no more.
 */
static BlockNumber
hv_sample_next_block(ReadStream *stream, void *callback_private_data,
					 void *per_buffer_data)
{
	BlockSampler bs = (BlockSampler) callback_private_data;

	if (BlockSampler_HasMore(bs))
		return BlockSampler_Next(bs);
	return InvalidBlockNumber;
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
	scan->vm_debt_block = InvalidBlockNumber;
	scan->fsm_exists = STORAGELAB_ON_ACCESS_PRUNE_SETS_VM &&
		smgrexists(RelationGetSmgr(rel), FSM_FORKNUM);
	scan->fsm_debt_leaf = InvalidBlockNumber;
	scan->cached_xid = InvalidTransactionId;

	/* The visibility map is small: count it whole, even for a sample. */
	if (nblocks > 0)
		visibilitymap_count(rel, &all_visible, &all_frozen);
	scan->all_visible_pages += all_visible;
	scan->all_frozen_pages += all_frozen;

	if (sample_pages <= 0 || (BlockNumber) sample_pages >= nblocks)
	{
		BlockRangeReadStreamPrivate range;
		ReadStream *stream;
		Buffer		buffer;

		/* Every page, in order: read ahead and combined on 17 and later. */
		range.current_blocknum = 0;
		range.last_exclusive = nblocks;
		stream = read_stream_begin_relation(READ_STREAM_FULL |
											READ_STREAM_USE_BATCHING,
											scan->strategy, rel, MAIN_FORKNUM,
											block_range_read_stream_cb,
											&range, 0);
		oldcxt = MemoryContextSwitchTo(scan->pagecxt);
		while ((buffer = read_stream_next_buffer(stream, NULL)) != InvalidBuffer)
		{
			CHECK_FOR_INTERRUPTS();
			storagelab_hv_read_page(scan, buffer, &stratum);
			MemoryContextReset(scan->pagecxt);
		}
		MemoryContextSwitchTo(oldcxt);
		read_stream_end(stream);
	}
	else
	{
		BlockSamplerData bs;
		HvStratum	last;
		ReadStream *stream;
		Buffer		buffer;

		/*
		 * The last page, usually the only partly filled one, is read exactly
		 * as a stratum of its own; the sample is drawn from the others, in
		 * ascending block order (read ahead on 17 and later).
		 */
		memset(&last, 0, sizeof(last));
		last.pages = 1;
		stratum.pages = nblocks - 1;
		(void) BlockSampler_Init(&bs, nblocks - 1, sample_pages - 1, HV_SAMPLE_SEED);
		stream = read_stream_begin_relation(READ_STREAM_DEFAULT, scan->strategy,
											rel, MAIN_FORKNUM,
											hv_sample_next_block, &bs, 0);
		oldcxt = MemoryContextSwitchTo(scan->pagecxt);
		while ((buffer = read_stream_next_buffer(stream, NULL)) != InvalidBuffer)
		{
			CHECK_FOR_INTERRUPTS();
			storagelab_hv_read_page(scan, buffer, &stratum);
			MemoryContextReset(scan->pagecxt);
		}
		CHECK_FOR_INTERRUPTS();
		buffer = ReadBufferExtended(rel, MAIN_FORKNUM, nblocks - 1, RBM_NORMAL,
									scan->strategy);
		storagelab_hv_read_page(scan, buffer, &last);
		MemoryContextReset(scan->pagecxt);
		MemoryContextSwitchTo(oldcxt);
		read_stream_end(stream);
		storagelab_hv_estimate_add_stratum(&scan->est, &last);
	}

	if (BufferIsValid(scan->vmbuffer))
		ReleaseBuffer(scan->vmbuffer);
	scan->vmbuffer = InvalidBuffer;

	storagelab_hv_estimate_add_stratum(&scan->est, &stratum);
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
 *		What a DBA should do about the figures: the most urgent one thing,
 *		in at most 100 characters and without numbers (the figures it rests
 *		on are result columns, named in the text).
 */
static const char *
hv_advice(HvScan *scan, int nrelations, bool toast, int32 oldest_age)
{
	HvEstimate *est = &scan->est;
	double		pages = (double) est->pages;
	double		debt_pages = est->total[HV_HINT_DEBT_PAGES];
	double		debt_tuples = est->total[HV_HINT_DEBT_TUPLES];
	double		tuples = est->total[HV_TUPLES];
	double		dead = est->total[HV_DEAD_ITEMS] + est->total[HV_DELETED_TUPLES];

	if (nrelations == 0)
		return toast ? "nothing to do: the table has no TOAST table" :
			"nothing to do: the table has no partitions with storage";
	if (est->pages == 0)
		return "nothing to do: the relation is empty";
	if (est->total[HV_PD_ALL_VISIBLE_MISMATCHES] > 0)
		return "VACUUM: pages disagree with the visibility map (pd_all_visible_mismatches; see the log)";
	if (oldest_age >= vacuum_freeze_table_age)
		return "VACUUM (FREEZE): XIDs are past vacuum_freeze_table_age; the next VACUUM is aggressive";
	if (debt_pages >= Max(1.0, 0.01 * pages))
		return est->total[HV_XMIN_UNHINTED] >= 0.5 * tuples ?
			"VACUUM; for bulk loads COPY FREEZE: the next read dirties hint_debt_pages pages for hints" :
			"VACUUM: the next read would dirty hint_debt_pages pages to set hint bits";
	if (debt_tuples >= Max(1.0, 0.01 * tuples))
		return "VACUUM: hint_debt_tuples rows need hint bits (their pages are still dirty in memory)";
	if (oldest_age >= vacuum_freeze_min_age &&
		(double) scan->all_frozen_pages < 0.5 * pages)
		return "VACUUM (FREEZE) at a quiet time: most pages hold XIDs older than vacuum_freeze_min_age";
	if (dead > Max(50.0, 0.1 * tuples))
		return "VACUUM: many dead line pointers and deleted tuples (dead_items, deleted_tuples)";
	if ((double) scan->all_visible_pages < 0.5 * pages)
		return "VACUUM: under half the pages are all-visible, so index-only scans visit the heap";
	return "nothing to do";
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

		storagelab_hv_estimate_interval(&scan->est, (HvFigure) f, &low, &high);
		appendStringInfo(&buf, "%s\"%s\": {\"low\": " INT64_FORMAT ", \"high\": " INT64_FORMAT "}",
						 f > 0 ? ", " : "", storagelab_hv_figure_names[f], low, high);
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

	SL_CHECK_ARGS(fcinfo, hv_arg_types, caller);
	tupdesc = SL_RESULT_DESC(fcinfo, hv_result_types, caller);
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

	StaticAssertStmt(lengthof(hv_result_types) == 6 + HV_NUM_FIGURES + 3 &&
					 lengthof(hv_result_types) <= lengthof(values),
					 "hv_result_types lists every result column");

	rels = hv_collect_relations(relid, toast, caller);

	memset(&scan, 0, sizeof(scan));
	storagelab_hv_estimate_init(&scan.est);
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
			n = storagelab_hv_sample_allocation(nblocks[i], total_pages, sample_pages);
		hv_read_relation(&scan, rel, nblocks[i], n);
		relation_close(rel, AccessShareLock);
		i++;
	}

	/*
	 * Ages as the SQL function age() computes them: against the transaction's
	 * own xid, or the next xid as of its first call in the transaction, so
	 * that two reads in one transaction agree while other sessions consume
	 * xids.
	 */
	if (TransactionIdIsValid(scan.oldest_unfrozen))
		oldest_age = (int32) (GetStableLatestTransactionId() - scan.oldest_unfrozen);

	memset(nulls, 0, sizeof(nulls));
	values[col++] = CStringGetTextDatum(hv_advice(&scan, list_length(rels), toast,
												  oldest_age));
	values[col++] = CStringGetTextDatum(scan.est.exact ? "exact" : "sampled");
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
	values[col++] = Int32GetDatum(list_length(rels));
	if (scan.est.exact)
		nulls[col] = true;
	else
		values[col] = hv_intervals_jsonb(&scan);
	col++;

	Assert(col == lengthof(hv_result_types));

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
