/*-------------------------------------------------------------------------
 *
 * int_overflow_measure.c
 *	  The measurements behind the storagelab.int_overflow view.
 *
 * storagelab_internal.int_overflow_measurements() returns one row per reported
 * column (the rows of int_overflow_catalog.c) with the measurement closest
 * to its limit:
 *
 *	- the sequences that feed it, read once each;
 *	- for int2/int4 columns without a sequence, and for keys that narrower
 *	  foreign-key columns reference: the ends of a btree index leading with
 *	  the column on every leaf table, else the bounds ANALYZE recorded;
 *	- for a foreign-key column narrower than the key it references: the
 *	  referenced key's measurements, against the child's type.
 *
 * The probes of int_overflow.c are called directly, once per object, each
 * in a memory context reset after it; they check the caller's privileges
 * and never wait for a lock.  The usage arithmetic is exact (128-bit
 * integers where the compiler has them).  The view adds the
 * settings-dependent parts (severity, growth, overflow_at) in SQL.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/table.h"
#include "catalog/pg_collation_d.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type_d.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/tuplestore.h"
#include "utils/varlena.h"

#include "compat.h"
#include "int_overflow.h"
#include "int_overflow_catalog.h"
#include "storagelab.h"

PG_FUNCTION_INFO_V1(storagelab_int_overflow_measurements);

/* Result columns of storagelab_internal.int_overflow_measurements(). */
#define IO_NCOLUMNS 19

/* The result columns, as part 10 declares int_overflow_measurements(). */
static const Oid io_result_types[IO_NCOLUMNS] = {
	OIDOID, INT2OID, NAMEOID, NAMEOID, NAMEOID, OIDOID, TEXTOID, OIDOID,
	NUMERICOID, NUMERICOID, NUMERICOID, NUMERICOID, NUMERICOID, NUMERICOID,
	INT8OID, BOOLOID, BOOLOID, TEXTOID, TEXTARRAYOID
};

/*
 * Wide integers for the usage arithmetic: a sequence value that was never
 * called is START - INCREMENT, and a distance between two bigints, which
 * need more than 64 bits.  Without a 128-bit integer type the arithmetic is
 * done in long double (exact up to 2^63 on x86; to 2^53 elsewhere);
 * -DSTORAGELAB_NO_INT128 builds that variant where int128 exists, to test it.
 */
#if defined(HAVE_INT128) && !defined(STORAGELAB_NO_INT128)
#define IO_WIDE_INT128 1
#endif

#ifdef IO_WIDE_INT128
typedef int128 io_wide;
#else
typedef long double io_wide;
#endif

/* The result of usage(): one measurement against one row. */
typedef struct IoUsage
{
	bool		has_cur;
	io_wide		cur;
	bool		has_lim;
	io_wide		lim;
	int64		used;			/* thousandths of a percent, when has_cur */
	bool		has_cycles;
	bool		cycles;
} IoUsage;

/*
 * new_meas
 *		A zeroed measurement.
 */
static IoMeas *
new_meas(IoSource source)
{
	IoMeas	   *m = palloc0(sizeof(IoMeas));

	m->source = source;
	return m;
}

/*
 * leaves_analyzed_empty
 *		Whether every leaf table of row had no rows at its last ANALYZE or
 *		VACUUM (pg_class.reltuples 0; -1 is never, and a row without leaves,
 *		a partitioned table without partitions, has nothing to say).
 */
static bool
leaves_analyzed_empty(IoRow *row)
{
	IoCol	   *leaf;

	for (leaf = row->leaves; leaf != NULL; leaf = leaf->next_leaf)
	{
		if (leaf->rel->cls.reltuples != 0)
			return false;
	}
	return row->leaves != NULL;
}

/*
 * measure_sequences
 *		A row's sequence measurements: each sequence read once (in probecxt,
 *		reset afterwards), however many rows it feeds.
 */
static void
measure_sequences(IoRow *row, uint64 read_at, MemoryContext probecxt)
{
	for (IoRowSeq *rs = row->seqs; rs != NULL; rs = rs->next)
	{
		IoMeas	   *m;

		if (!rs->seq->read)
		{
			MemoryContext old = MemoryContextSwitchTo(probecxt);

			if (rs->seq->has_class)
				rs->seq->status = storagelab_sequence_state_known(&rs->seq->cls, read_at,
																  &rs->seq->last_value,
																  &rs->seq->is_called);
			else
				rs->seq->status = storagelab_sequence_state(rs->seq->seqid, true,
															&rs->seq->last_value,
															&rs->seq->is_called);
			rs->seq->read = true;
			MemoryContextSwitchTo(old);
			MemoryContextReset(probecxt);
		}
		m = new_meas(IO_SEQUENCE);
		m->seq = rs->seq;
		m->identity = rs->identity;
		m->exact = true;
		m->status = rs->seq->status;
		row->own = lappend(row->own, m);
	}
}

/*
 * measure_index
 *		A row's index measurement: the ends of the index leading with the
 *		column on every leaf, added only when every leaf has one; its status
 *		is unreadable when any leaf is, locked when any is, unavailable when
 *		all are.  Returns whether it gave usable bounds.
 */
static bool
measure_index(IoRow *row, uint64 read_at, MemoryContext probecxt)
{
	bool		all_indexed = row->leaves != NULL;
	bool		any_value = false;
	bool		approximate = false;
	bool		locked = false;
	bool		all_unavailable = true;
	int64		minv = 0;
	int64		maxv = 0;
	IoMeas	   *m;

	if (row->leaves == NULL)
		return false;
	for (IoCol *leaf = row->leaves; leaf != NULL; leaf = leaf->next_leaf)
	{
		if (leaf->index == NULL)
			all_indexed = false;
	}
	for (IoCol *leaf = row->leaves; leaf != NULL; leaf = leaf->next_leaf)
	{
		const char *status;
		int64		lmin = 0;
		int64		lmax = 0;
		MemoryContext old;

		if (leaf->index == NULL)
			continue;
		CHECK_FOR_INTERRUPTS();
		old = MemoryContextSwitchTo(probecxt);
		status = storagelab_index_bounds_known(&leaf->rel->cls, leaf->attacl,
											   leaf->basetype,
											   leaf->index, read_at,
											   &lmin, &lmax);
		MemoryContextSwitchTo(old);
		MemoryContextReset(probecxt);

		if (status == SL_STATUS_OK || status == SL_STATUS_APPROXIMATE)
		{
			if (!any_value || lmin < minv)
				minv = lmin;
			if (!any_value || lmax > maxv)
				maxv = lmax;
			any_value = true;
		}
		if (status == SL_STATUS_APPROXIMATE)
			approximate = true;
		if (status == SL_STATUS_UNREADABLE)
			row->leaf_unreadable = true;
		if (status == SL_STATUS_LOCKED)
			locked = true;
		if (status != SL_STATUS_UNAVAILABLE)
			all_unavailable = false;
	}
	if (!all_indexed)
		return false;

	m = new_meas(IO_INDEX);
	m->exact = !approximate;
	row->own = lappend(row->own, m);
	if (row->leaf_unreadable)
		m->status = SL_STATUS_UNREADABLE;
	else if (locked)
		m->status = SL_STATUS_LOCKED;
	else if (all_unavailable)
		m->status = SL_STATUS_UNAVAILABLE;
	else
	{
		m->has_values = any_value;
		m->min_value = minv;
		m->max_value = maxv;
		m->status = approximate ? "estimate" :
			any_value ? SL_STATUS_OK : SL_STATUS_EMPTY;
		return true;
	}
	return false;
}

/*
 * measure_statistics
 *		A row's statistics measurement, when the caller may read them:
 *		status empty when every leaf had no rows at its last ANALYZE or
 *		VACUUM, else the bounds ANALYZE recorded for the whole tree.
 */
static void
measure_statistics(IoRow *row)
{
	bool		inherited = false;
	const char *status;

	CHECK_FOR_INTERRUPTS();
	status = storagelab_stats_access_known(&row->col->rel->cls,
										   row->col->attacl, &inherited);
	if (status == SL_STATUS_OK)
	{
		/*
		 * Empty at the last ANALYZE or VACUUM: pg_statistic keeps the bounds
		 * of rows since deleted (ANALYZE of no rows writes none).
		 */
		if (leaves_analyzed_empty(row))
		{
			IoMeas	   *m = new_meas(IO_STATISTICS);

			m->exact = false;
			m->status = SL_STATUS_EMPTY;
			row->own = lappend(row->own, m);
		}
		/* the whole tree's statistics first (scan_pg_statistic()) */
		else if (row->stats_found)
		{
			IoMeas	   *m = new_meas(IO_STATISTICS);

			m->has_values = true;
			m->min_value = row->stats_min;
			m->max_value = row->stats_max;
			m->exact = false;
			m->status = "estimate";
			row->own = lappend(row->own, m);
		}
	}
	else if (status == SL_STATUS_UNREADABLE)
		row->stats_unreadable = true;
}

/*
 * measure_row
 *		A row's own measurements: its sequences (read once per sequence), the
 *		ends of an index on every leaf, else its statistics bounds.
 *
 * Index ends and statistics are read for int2/int4 columns without a
 * sequence and for keys that narrower foreign-key columns reference.  The
 * index measurement counts only when every leaf table has an index leading
 * with the column (measure_index()).  Statistics are read when there is no
 * usable index measurement (measure_statistics()).
 */
static void
measure_row(IoRow *row, uint64 read_at, MemoryContext probecxt)
{
	measure_sequences(row, read_at, probecxt);
	if (row->seqs != NULL ||
		(row->col->basetype == INT8OID && !row->narrow_ref))
		return;
	if (!measure_index(row, read_at, probecxt))
		measure_statistics(row);
}

/*
 * wide_to_numeric
 *		A wide integer as numeric.
 */
static Numeric
wide_to_numeric(io_wide v)
{
#ifdef IO_WIDE_INT128
	if (v >= PG_INT64_MIN && v <= PG_INT64_MAX)
		return int64_to_numeric((int64) v);
	/* Beyond int64 (only next to bigint bounds): v = hi * 10^9 + lo. */
	return DatumGetNumeric(DirectFunctionCall2(numeric_add,
											   DirectFunctionCall2(numeric_mul,
																   NumericGetDatum(int64_to_numeric((int64) (v / 1000000000))),
																   NumericGetDatum(int64_to_numeric(1000000000))),
											   NumericGetDatum(int64_to_numeric((int64) (v % 1000000000)))));
#else
	if (v >= -9223372036854775808.0L && v < 9223372036854775808.0L)
		return int64_to_numeric((int64) v);
	return DatumGetNumeric(DirectFunctionCall1(float8_numeric,
											   Float8GetDatum((double) v)));
#endif
}

/*
 * wide_div_trunc
 *		a / b, truncated toward zero.
 */
static io_wide
wide_div_trunc(io_wide a, io_wide b)
{
#ifdef IO_WIDE_INT128
	return a / b;
#else
	return truncl(a / b);
#endif
}

/*
 * used_thousandths
 *		num / den as a percentage in thousandths (so 100% is 100000), rounded
 *		half away from zero like numeric's round(), clamped to 0 .. 100000.
 */
static int64
used_thousandths(io_wide num, io_wide den)
{
	io_wide		q;

#ifdef IO_WIDE_INT128
	io_wide		n = num * 100000;
	io_wide		r;

	q = n / den;
	r = n % den;
	if (r < 0)
		r = -r;
	if (r >= (den < 0 ? -den : den) - r)
		q += ((n < 0) != (den < 0)) ? -1 : 1;
#else
	q = roundl(num * 100000.0L / den);
#endif
	if (q < 0)
		return 0;
	if (q > 100000)
		return 100000;
	return (int64) q;
}

/*
 * usage
 *		One measurement against one row's type (and the sequence's own
 *		bounds).  Sequences move from START toward the bound they move to:
 *		the tighter of MAXVALUE and the type's maximum when ascending, of
 *		MINVALUE and the type's minimum when descending.  Values are measured
 *		from 0 toward whichever of the type's bounds is relatively closer.
 */
static IoUsage
usage(IoRow *row, IoMeas *m)
{
	IoUsage		u;

	memset(&u, 0, sizeof(u));
	if (m->seq != NULL)
	{
		IoSeq	   *s = m->seq;
		int64		lo = Max(s->min, io_type_min(row));
		int64		hi = Min(s->max, io_type_max(row));
		int64		base = Min(Max(s->start, lo), hi);

		u.has_lim = true;
		u.lim = s->increment > 0 ? hi : lo;
		u.has_cycles = true;
		u.cycles = s->cycle && s->max <= io_type_max(row) && s->min >= io_type_min(row);
		if (m->status == SL_STATUS_OK)
		{
			u.has_cur = true;
			u.cur = s->is_called ? (io_wide) s->last_value :
				(io_wide) s->last_value - (io_wide) s->increment;
			if (u.lim == base)
				u.used = u.cur == u.lim ? 100000 : 0;
			else
				u.used = used_thousandths(u.cur - base, u.lim - base);
		}
	}
	else if (m->has_values)
	{
		bool		toward_min;

		toward_min = (double) m->min_value / (double) io_type_min(row) >
			Max((double) m->max_value / (double) io_type_max(row), 0.0);
		u.has_cur = true;
		u.cur = toward_min ? m->min_value : m->max_value;
		u.has_lim = true;
		u.lim = toward_min ? io_type_min(row) : io_type_max(row);
		u.used = used_thousandths(u.cur, u.lim);
	}
	return u;
}

/*
 * better_measurement
 *		Whether measurement a (usage ua) is to be reported rather than b:
 *		a known value first, then an exact one, then the higher usage, then
 *		the source's priority (sequence, index, statistics, foreign key), then
 *		the lower sequence OID.
 */
static bool
better_measurement(IoMeas *a, IoUsage *ua, IoMeas *b, IoUsage *ub)
{
	if (ua->has_cur != ub->has_cur)
		return ua->has_cur;
	if (a->exact != b->exact)
		return a->exact;
	if (ua->has_cur && ua->used != ub->used)
		return ua->used > ub->used;
	if (a->source != b->source)
		return a->source < b->source;
	if (a->seq != NULL && b->seq != NULL && a->seq->seqid != b->seq->seqid)
		return a->seq->seqid < b->seq->seqid;
	return false;
}

/*
 * qualified_column_name
 *		schema.table.column of a row, each part quoted as needed.
 */
static char *
qualified_column_name(IoRow *row)
{
	return psprintf("%s.%s.%s", quote_identifier(NameStr(*row->col->rel->nspname)),
					quote_identifier(row->col->rel->relname),
					quote_identifier(row->col->attname));
}

/*
 * text_cmp
 *		qsort comparator of text datums in the database's default collation
 *		(the order array_agg(DISTINCT ...) gave).
 */
static int
text_cmp(const void *a, const void *b)
{
	text	   *ta = DatumGetTextPP(*(const Datum *) a);
	text	   *tb = DatumGetTextPP(*(const Datum *) b);

	return varstr_cmp(VARDATA_ANY(ta), VARSIZE_ANY_EXHDR(ta),
					  VARDATA_ANY(tb), VARSIZE_ANY_EXHDR(tb),
					  DEFAULT_COLLATION_OID);
}

/*
 * referencing_columns
 *		The int2/int4 foreign-key columns that must follow row to bigint:
 *		those referencing it, and those referencing them, transitively
 *		(bigint ones need no change and stop the walk), sorted and distinct.
 */
static Datum
referencing_columns(IoRow *row, Datum empty)
{
	List	   *queue = list_make1(row);
	List	   *found = NIL;
	ListCell   *lc;
	Datum	   *names;
	int			n = 0;
	int			i;

	row->visited = true;
	/* breadth first; the queue grows while it is walked */
	for (i = 0; i < list_length(queue); i++)
	{
		IoRow	   *r = list_nth(queue, i);
		ListCell   *fc;

		foreach(fc, r->referenced_by)
		{
			IoFkPair   *fk = lfirst(fc);

			if (fk->basetype == INT8OID || fk->row->visited)
				continue;
			fk->row->visited = true;
			queue = lappend(queue, fk->row);
			found = lappend(found, fk->row);
		}
	}
	foreach(lc, queue)
		((IoRow *) lfirst(lc))->visited = false;

	if (found == NIL)
		return empty;
	names = palloc(sizeof(Datum) * list_length(found));
	foreach(lc, found)
		names[n++] = CStringGetTextDatum(qualified_column_name(lfirst(lc)));
	qsort(names, n, sizeof(Datum), text_cmp);
	/* distinct names (two rows can share a name only through odd quoting) */
	for (i = 1; i < n;)
	{
		if (text_cmp(&names[i - 1], &names[i]) == 0)
		{
			memmove(&names[i], &names[i + 1], sizeof(Datum) * (n - i - 1));
			n--;
		}
		else
			i++;
	}
	return PointerGetDatum(construct_array(names, n, TEXTOID, -1, false,
										   TYPALIGN_INT));
}


/*
 * source_name
 *		The source column's text of a measurement.
 */
static const char *
source_name(IoMeas *m)
{
	if (m->foreign_key)
		return "foreign key";
	switch (m->source)
	{
		case IO_SEQUENCE:
			return m->identity ? "identity" : "sequence";
		case IO_INDEX:
			return "index";
		case IO_STATISTICS:
			return "statistics";
		default:
			return "foreign key";
	}
}

/*
 * emit_row
 *		One result row: the chosen measurement m (NULL: none) of row.
 */
static void
emit_row(ReturnSetInfo *rsinfo, IoRow *row, IoMeas *m, IoUsage *u,
		 Datum empty_array)
{
	Datum		values[IO_NCOLUMNS];
	bool		nulls[IO_NCOLUMNS];
	IoCol	   *col = row->col;
	NameData	relname;
	NameData	attname;

	memset(nulls, true, sizeof(nulls));
	values[0] = ObjectIdGetDatum(row->key.relid);
	values[1] = Int16GetDatum((int16) row->key.attnum);
	values[2] = NameGetDatum(col->rel->nspname);
	namestrcpy(&relname, col->rel->relname);
	values[3] = NameGetDatum(&relname);
	namestrcpy(&attname, col->attname);
	values[4] = NameGetDatum(&attname);
	values[5] = ObjectIdGetDatum(col->atttypid);
	nulls[0] = nulls[1] = nulls[2] = nulls[3] = nulls[4] = nulls[5] = false;

	if (m == NULL)
	{
		values[6] = CStringGetTextDatum("none");
		nulls[6] = false;
		values[16] = BoolGetDatum(false);
		nulls[16] = false;
		values[17] = CStringGetTextDatum(row->leaf_unreadable || row->stats_unreadable ?
										 "unreadable" : "no data");
		nulls[17] = false;
	}
	else
	{
		values[6] = CStringGetTextDatum(source_name(m));
		nulls[6] = false;
		if (m->seq != NULL)
		{
			values[7] = ObjectIdGetDatum(m->seq->seqid);
			nulls[7] = false;
			values[14] = Int64GetDatum(m->seq->increment);
			nulls[14] = false;
		}
		if (u->has_cur)
		{
			values[8] = NumericGetDatum(wide_to_numeric(u->cur));
			nulls[8] = false;
			values[10] = NumericGetDatum(int64_div_fast_to_numeric(u->used, 3));
			nulls[10] = false;
		}
		if (u->has_lim)
		{
			values[9] = NumericGetDatum(wide_to_numeric(u->lim));
			nulls[9] = false;
		}
		if (u->has_cur && u->has_lim)
		{
			/* steps left: greatest(0, floor((lim - cur) / increment)) */
			io_wide		step = m->seq != NULL ? (io_wide) m->seq->increment :
				(u->lim > 0 ? 1 : -1);
			io_wide		left = wide_div_trunc(u->lim - u->cur, step);

			values[11] = NumericGetDatum(wide_to_numeric(left > 0 ? left : 0));
			nulls[11] = false;
		}
		if (m->has_values)
		{
			values[12] = NumericGetDatum(int64_to_numeric(m->min_value));
			values[13] = NumericGetDatum(int64_to_numeric(m->max_value));
			nulls[12] = nulls[13] = false;
		}
		if (u->has_cycles)
		{
			values[15] = BoolGetDatum(u->cycles);
			nulls[15] = false;
		}
		values[16] = BoolGetDatum(m->exact);
		nulls[16] = false;
		values[17] = CStringGetTextDatum(m->status);
		nulls[17] = false;
	}
	values[18] = referencing_columns(row, empty_array);
	nulls[18] = false;

	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * emit_best
 *		Emit row with the measurement closest to its limit: its own, or one
 *		of the wider keys' it references (a narrower column breaks first),
 *		evaluated against its own type.
 */
static void
emit_best(ReturnSetInfo *rsinfo, IoRow *row, Datum empty_array)
{
	IoMeas	   *best = NULL;
	IoUsage		best_u;
	ListCell   *lc;

	memset(&best_u, 0, sizeof(best_u));
	foreach(lc, row->own)
	{
		IoMeas	   *m = lfirst(lc);
		IoUsage		u = usage(row, m);

		if (best == NULL || better_measurement(m, &u, best, &best_u))
		{
			best = m;
			best_u = u;
		}
	}
	foreach(lc, row->narrow_refs)
	{
		IoRow	   *ref = lfirst(lc);
		ListCell   *mc;

		foreach(mc, ref->own)
		{
			IoMeas	   *m = palloc(sizeof(IoMeas));
			IoUsage		u;

			*m = *(IoMeas *) lfirst(mc);
			m->foreign_key = true;
			m->source = IO_FOREIGN_KEY;
			u = usage(row, m);
			if (best == NULL || better_measurement(m, &u, best, &best_u))
			{
				best = m;
				best_u = u;
			}
		}
	}
	emit_row(rsinfo, row, best, &best_u, empty_array);
}

/*
 * storagelab_int_overflow_measurements
 *		SQL: storagelab_internal.int_overflow_measurements() RETURNS TABLE (row_rel oid,
 *			 row_attnum smallint, nspname name, relname name, attname name,
 *			 atttypid oid, source text, seqid oid, cur numeric, lim numeric,
 *			 used numeric, left_ numeric, min_value numeric, max_value numeric,
 *			 seq_increment bigint, cycles boolean, exact boolean, status text,
 *			 referencing_columns text[])
 *
 * One row per reported column with the measurement closest to its limit
 * (see the file header); a column without any gets source "none" and status
 * "unreadable" or "no data".  bigint columns appear only when a sequence
 * feeds them.  Runs as the caller: the probes check the caller's privileges
 * on each sequence, table and column.
 */
Datum
storagelab_int_overflow_measurements(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext workcxt;
	MemoryContext old;
	MemoryContext probecxt;
	MemoryContext rowcxt;
	IoRow	  **rows;
	IoRow	   *row;
	long		nrows;
	long		i;
	uint64		read_at;
	Datum		empty_array;

	InitMaterializedSRF(fcinfo, 0);
	SL_CHECK_RESULT(rsinfo->setDesc, io_result_types, "int_overflow_measurements");

	workcxt = AllocSetContextCreate(CurrentMemoryContext,
									"int_overflow measurements",
									ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(workcxt);

	probecxt = AllocSetContextCreate(workcxt, "int_overflow probe",
									 ALLOCSET_DEFAULT_SIZES);

	rows = storagelab_int_overflow_rows(&nrows, &read_at);

	empty_array = PointerGetDatum(construct_empty_array(TEXTOID));

	/*
	 * Keys that narrower foreign-key columns reference first: those borrow
	 * their measurements, which are kept to the end.  Every other row is
	 * measured when it is emitted, in rowcxt, reset after each row: the
	 * working memory of the measurements and of the result row's values does
	 * not grow with the catalog.
	 */
	for (i = 0; i < nrows; i++)
	{
		CHECK_FOR_INTERRUPTS();
		if (rows[i]->narrow_ref)
			measure_row(rows[i], read_at, probecxt);
	}

	rowcxt = AllocSetContextCreate(workcxt, "int_overflow row",
								   ALLOCSET_DEFAULT_SIZES);
	for (i = 0; i < nrows; i++)
	{
		row = rows[i];
		CHECK_FOR_INTERRUPTS();
		/* bigint columns are listed only when a sequence feeds them */
		if (row->col->basetype == INT8OID && row->seqs == NULL)
			continue;

		MemoryContextSwitchTo(rowcxt);
		if (!row->narrow_ref)
			measure_row(row, read_at, probecxt);
		emit_best(rsinfo, row, empty_array);
		MemoryContextSwitchTo(workcxt);
		if (!row->narrow_ref)
			row->own = NIL;
		MemoryContextReset(rowcxt);
	}

	MemoryContextSwitchTo(old);
	MemoryContextDelete(workcxt);
	return (Datum) 0;
}
