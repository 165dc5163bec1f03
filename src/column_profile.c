/*-------------------------------------------------------------------------
 *
 * column_profile.c
 *	  One exact pass over a table for all its columns, and the text
 *	  classification shared with the statistics-based rules.
 *
 * column_profile_scan(regclass) backs storagelab.column_profile(): it reads
 * every row visible to the caller's snapshot once, through the table access
 * method like a SELECT does (so, like any query, it may set hint bits; it
 * never prunes or writes otherwise), and returns per column the NULL count,
 * the average stored width of variable-width values (VARSIZE_ANY, as
 * ANALYZE measures it) and its standard deviation, the bounds of integer and numeric columns, whether a
 * numeric column holds only integers, the kind shared by every value of a
 * text, varchar or char(n) column (text_kind), and the average width of
 * char(n) values without their blank padding.
 *
 * storagelab_summarize_sample() computes the same facts from the values
 * ANALYZE kept in pg_statistic (most common values and histogram bounds,
 * for column_stats.c), with the same code, so that the exact and the
 * statistics-based rules agree; text_kind(text) classifies one value.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>
#include <math.h>

#include "access/detoast.h"
#include "access/relation.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"

#include "compat.h"
#include "storagelab.h"

PG_FUNCTION_INFO_V1(storagelab_text_kind);
PG_FUNCTION_INFO_V1(storagelab_column_profile_scan);

/* column_profile_scan()'s result columns (part 50's declaration). */
static const Oid profile_result_types[] = {
	INT2OID, INT8OID, INT8OID, FLOAT8OID, NUMERICOID, NUMERICOID, BOOLOID,
	TEXTOID, FLOAT8OID, FLOAT8OID
};

/* Text kinds, one bit each, in the order they are tested. */
#define KIND_UUID			0x01
#define KIND_INTEGER		0x02
#define KIND_BOOLEAN		0x04
#define KIND_DATE			0x08
#define KIND_TIMESTAMP		0x10
#define KIND_TIMESTAMPTZ	0x20
#define KIND_ALL			0x3F

/* The longest value any kind accepts (a UUID). */
#define KIND_MAX_LEN		36

/* How a column is profiled, by type. */
typedef enum ProfileClass
{
	PC_FIXED,					/* fixed width: NULLs only */
	PC_VARLENA,					/* other variable width: NULLs and width */
	PC_INTEGER,					/* int2, int4, int8: bounds */
	PC_NUMERIC,					/* numeric: bounds, integrality */
	PC_TEXT,					/* text, varchar: kind, integer bounds */
	PC_BPCHAR					/* char(n): kind, width without padding */
} ProfileClass;

typedef struct ColumnState
{
	ProfileClass pclass;
	int64		nonnull;
	double		width_sum;		/* sum of VARSIZE_ANY, variable width */
	double		width_sq_sum;	/* sum of its squares */
	double		trimmed_sum;	/* char(n): sum of widths without padding */
	bool		have_bounds;
	int64		imin;			/* integer and integer-text bounds */
	int64		imax;
	bool		int_overflow;	/* integer text beyond int8 */
	Datum		nmin;			/* numeric bounds (copies) */
	Datum		nmax;
	Size		nmin_cap;		/* their buffers' sizes */
	Size		nmax_cap;
	bool		all_integers;
	int			kind_mask;		/* kinds every value so far has */
} ColumnState;

/*
 * digits
 *		Whether s[0..n-1] are all ASCII digits.
 */
static bool
digits(const char *s, int n)
{
	for (int i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/*
 * two_digits_upto
 *		Whether s[0..1] are digits forming a number from lo to hi.
 */
static bool
two_digits_in(const char *s, int lo, int hi)
{
	int			v;

	if (!digits(s, 2))
		return false;
	v = (s[0] - '0') * 10 + (s[1] - '0');
	return v >= lo && v <= hi;
}

/*
 * is_date_prefix
 *		Whether s starts with YYYY-MM-DD (month 01-12, day 01-31); len >= 10.
 */
static bool
is_date_prefix(const char *s)
{
	return digits(s, 4) && s[4] == '-' && two_digits_in(s + 5, 1, 12) &&
		s[7] == '-' && two_digits_in(s + 8, 1, 31);
}

/*
 * time_part_len
 *		Length of the longest HH:MM[:SS[.ffffff]] at s (HH 00-23, MM and SS
 *		00-59, 1 to 6 fraction digits) within n bytes, or -1.  Greedy is
 *		enough: what may follow (end, sign, Z) never starts with a digit,
 *		':' or '.'.
 */
static int
time_part_len(const char *s, int n)
{
	int			i;

	if (n < 5 || !two_digits_in(s, 0, 23) || s[2] != ':' ||
		!two_digits_in(s + 3, 0, 59))
		return -1;
	i = 5;
	if (i + 3 <= n && s[i] == ':' && two_digits_in(s + i + 1, 0, 59))
	{
		i += 3;
		if (i + 2 <= n && s[i] == '.' && s[i + 1] >= '0' && s[i + 1] <= '9')
		{
			int			f = 0;

			i++;
			while (i < n && f < 6 && s[i] >= '0' && s[i] <= '9')
			{
				i++;
				f++;
			}
		}
	}
	return i;
}

/* hex_digit[c]: whether c is an ASCII hexadecimal digit (no locale). */
static bool hex_digit[256];
static bool hex_digit_ready = false;

/*
 * hex_run
 *		Whether s[0..n-1] are all hexadecimal digits.
 */
static inline bool
hex_run(const char *s, int n)
{
	bool		ok = true;

	/* no early exit: a short loop without branches runs fastest here */
	for (int i = 0; i < n; i++)
		ok &= hex_digit[(unsigned char) s[i]];
	return ok;
}

/*
 * is_uuid
 *		Whether the 36 bytes at s are 8-4-4-4-12 hexadecimal digits.
 */
static bool
is_uuid(const char *s)
{
	if (!hex_digit_ready)
	{
		for (int c = 0; c < 256; c++)
			hex_digit[c] = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
				(c >= 'A' && c <= 'F');
		hex_digit_ready = true;
	}
	return s[8] == '-' && s[13] == '-' && s[18] == '-' && s[23] == '-' &&
		hex_run(s, 8) && hex_run(s + 9, 4) && hex_run(s + 14, 4) &&
		hex_run(s + 19, 4) && hex_run(s + 24, 12);
}

/*
 * classify_text
 *		The kind bit of the value s[0..len-1] among the kinds in mask, or 0
 *		when it has none of them.  The kinds exclude each other, so testing
 *		only those a column may still have (its kind_mask) gives the same
 *		answer as testing all, for less work per value.
 *
 * uuid: 8-4-4-4-12 hexadecimal digits.  integer: an optional '-', then 0 or
 * digits without a leading zero, at most 20 bytes.  boolean: t, f, true,
 * false, y, n, yes, no in any case.  date: YYYY-MM-DD.  timestamp: a date, a
 * space or 'T', HH:MM[:SS[.f]], 16 to 35 bytes.  timestamptz: the same
 * followed by Z or +HH, +HHMM, +HH:MM (or -), 17 to 35 bytes.
 */
static int
classify_text(const char *s, int len, int mask)
{
	if ((mask & KIND_UUID) && len == 36 && is_uuid(s))
		return KIND_UUID;
	if ((mask & KIND_INTEGER) && len >= 1 && len <= 20)
	{
		const char *d = s;
		int			n = len;

		if (*d == '-')
		{
			d++;
			n--;
		}
		if (n >= 1 && digits(d, n) && (d[0] != '0' || n == 1))
			return KIND_INTEGER;
	}
	if ((mask & KIND_BOOLEAN) && len >= 1 && len <= 5)
	{
		static const char *const words[] = {"t", "f", "true", "false", "y", "n", "yes", "no"};

		for (int i = 0; i < lengthof(words); i++)
			if ((int) strlen(words[i]) == len && pg_strncasecmp(s, words[i], len) == 0)
				return KIND_BOOLEAN;
	}
	if ((mask & KIND_DATE) && len == 10 && is_date_prefix(s))
		return KIND_DATE;
	if ((mask & (KIND_TIMESTAMP | KIND_TIMESTAMPTZ)) &&
		len >= 16 && len <= 35 && is_date_prefix(s) && (s[10] == ' ' || s[10] == 'T'))
	{
		int			t = time_part_len(s + 11, len - 11);
		int			rest;
		const char *z;

		if (t < 0)
			return 0;
		rest = len - 11 - t;
		z = s + 11 + t;
		if (rest == 0)
			return mask & KIND_TIMESTAMP;
		if (len < 17 || !(mask & KIND_TIMESTAMPTZ))
			return 0;
		if (rest == 1 && z[0] == 'Z')
			return KIND_TIMESTAMPTZ;
		if ((z[0] == '+' || z[0] == '-') && (rest == 3 || rest == 5 || rest == 6) &&
			two_digits_in(z + 1, 0, 19))
		{
			if (rest == 3)
				return KIND_TIMESTAMPTZ;
			if (rest == 5 && two_digits_in(z + 3, 0, 59))
				return KIND_TIMESTAMPTZ;
			if (rest == 6 && z[3] == ':' && two_digits_in(z + 4, 0, 59))
				return KIND_TIMESTAMPTZ;
		}
	}
	return 0;
}

/*
 * kind_name
 *		The name of a single kind bit, or NULL.
 */
static const char *
kind_name(int kind)
{
	switch (kind)
	{
		case KIND_UUID:
			return "uuid";
		case KIND_INTEGER:
			return "integer";
		case KIND_BOOLEAN:
			return "boolean";
		case KIND_DATE:
			return "date";
		case KIND_TIMESTAMP:
			return "timestamp";
		case KIND_TIMESTAMPTZ:
			return "timestamptz";
		default:
			return NULL;
	}
}

/*
 * storagelab_text_kind
 *		text_kind(value text) text: uuid, integer, boolean, date, timestamp or
 *		timestamptz when the value is written as one (see classify_text), else
 *		NULL.
 */
Datum
storagelab_text_kind(PG_FUNCTION_ARGS)
{
	text	   *t = PG_GETARG_TEXT_PP(0);
	const char *name = kind_name(classify_text(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t),
													 KIND_ALL));

	if (name == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(name));
}

/*
 * parse_int64
 *		Value of an integer-kind string; false when it does not fit int64.
 */
static bool
parse_int64(const char *s, int len, int64 *result)
{
	bool		neg = (s[0] == '-');
	uint64		v = 0;

	for (int i = neg ? 1 : 0; i < len; i++)
	{
		int			d = s[i] - '0';

		if (v > (PG_UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (neg)
	{
		if (v > (uint64) PG_INT64_MAX + 1)
			return false;
		*result = (v == (uint64) PG_INT64_MAX + 1) ? PG_INT64_MIN : -(int64) v;
	}
	else
	{
		if (v > (uint64) PG_INT64_MAX)
			return false;
		*result = (int64) v;
	}
	return true;
}

/*
 * parse_integer_kind
 *		Whether s[0..len-1] is of kind integer (see classify_text), in one
 *		pass: 0 when not, 1 with its value in *result, 2 when it is but does
 *		not fit int64.
 */
static int
parse_integer_kind(const char *s, int len, int64 *result)
{
	const char *d = s;
	int			n = len;
	bool		neg = false;
	uint64		v = 0;
	bool		fits = true;

	if (n >= 1 && *d == '-')
	{
		neg = true;
		d++;
		n--;
	}
	if (len > 20 || n < 1 || (d[0] == '0' && n > 1))
		return 0;
	for (int i = 0; i < n; i++)
	{
		unsigned int digit = (unsigned char) d[i] - '0';

		if (digit > 9)
			return 0;
		if (v > (PG_UINT64_MAX - digit) / 10)
			fits = false;
		else
			v = v * 10 + digit;
	}
	if (!fits || v > (uint64) PG_INT64_MAX + (neg ? 1 : 0))
		return 2;
	*result = neg ? (v == (uint64) PG_INT64_MAX + 1 ? PG_INT64_MIN : -(int64) v) : (int64) v;
	return 1;
}

/*
 * note_integer
 *		Widen a column's integer bounds to take v.
 */
static void
note_integer(ColumnState *st, int64 v)
{
	if (!st->have_bounds)
	{
		st->imin = st->imax = v;
		st->have_bounds = true;
	}
	else if (v < st->imin)
		st->imin = v;
	else if (v > st->imax)
		st->imax = v;
}

/*
 * profile_text
 *		Account one non-NULL text, varchar or char(n) value.  Detoasts only
 *		what it must: a value longer than any kind is never fetched for the
 *		kind, only char(n) values are fetched whole (for their padding).
 */
static void
profile_text(ColumnState *st, Datum value)
{
	bool		want_kind = st->kind_mask != 0;
	struct varlena *v;
	const char *s;
	int			len;
	int			kind;

	if (!want_kind && st->pclass != PC_BPCHAR)
		return;
	v = (struct varlena *) DatumGetPointer(value);
	if (VARATT_IS_EXTERNAL(v) || VARATT_IS_COMPRESSED(v))
	{
		/* external or compressed: fetch only what a kind could be */
		if (st->pclass != PC_BPCHAR &&
			toast_raw_datum_size(value) - VARHDRSZ > KIND_MAX_LEN)
		{
			st->kind_mask = 0;
			return;
		}
		v = pg_detoast_datum_packed(v);
	}
	s = VARDATA_ANY(v);
	len = VARSIZE_ANY_EXHDR(v);

	if (st->pclass == PC_BPCHAR)
	{
		while (len > 0 && s[len - 1] == ' ')
			len--;
		/* stored as varchar: 1-byte header up to VARATT_SHORT_MAX bytes */
		st->trimmed_sum += len + (len + VARHDRSZ_SHORT <= VARATT_SHORT_MAX ?
								  VARHDRSZ_SHORT : VARHDRSZ);
		if (!want_kind)
			return;
	}

	if (st->kind_mask == KIND_INTEGER)
	{
		/* the common steady state: integers only, parsed in one pass */
		int64		iv;

		switch (parse_integer_kind(s, len, &iv))
		{
			case 0:
				st->kind_mask = 0;
				break;
			case 1:
				if (!st->int_overflow)
					note_integer(st, iv);
				break;
			default:
				st->int_overflow = true;
				break;
		}
		return;
	}
	kind = classify_text(s, len, st->kind_mask);
	st->kind_mask &= kind;
	if (st->kind_mask == KIND_INTEGER && !st->int_overflow)
	{
		int64		iv;

		if (parse_int64(s, len, &iv))
			note_integer(st, iv);
		else
			st->int_overflow = true;
	}
}

/*
 * set_bound
 *		Copy the numeric n into a bound's buffer in colctx, which is
 *		reused while it is large enough (no allocation per new bound).
 */
static void
set_bound(Datum *bound, Size *cap, Numeric n, MemoryContext colctx)
{
	Size		size = VARSIZE(n);

	if (*cap < size)
	{
		if (*cap > 0)
			pfree(DatumGetPointer(*bound));
		*cap = Max(size, 32);
		*bound = PointerGetDatum(MemoryContextAlloc(colctx, *cap));
	}
	memcpy(DatumGetPointer(*bound), n, size);
}

/*
 * profile_numeric
 *		Account one non-NULL numeric value: bounds (copied into colctx) and
 *		whether it is an integer.  The value is detoasted once (a 1-byte
 *		header becomes a 4-byte one), so the comparisons copy nothing.
 */
static void
profile_numeric(ColumnState *st, Datum value, MemoryContext colctx)
{
	Numeric		n = DatumGetNumeric(value);
	Datum		d = NumericGetDatum(n);

	if (st->all_integers)
	{
		if (numeric_is_nan(n) || numeric_is_inf(n))
			st->all_integers = false;
		else if (DatumGetInt32(DirectFunctionCall1(numeric_min_scale, d)) > 0)
			st->all_integers = false;
	}

	if (!st->have_bounds)
	{
		set_bound(&st->nmin, &st->nmin_cap, n, colctx);
		set_bound(&st->nmax, &st->nmax_cap, n, colctx);
		st->have_bounds = true;
	}
	else if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, d, st->nmin)) < 0)
		set_bound(&st->nmin, &st->nmin_cap, n, colctx);
	else if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, d, st->nmax)) > 0)
		set_bound(&st->nmax, &st->nmax_cap, n, colctx);
}

/*
 * profile_states
 *		One ColumnState per attribute of the table (dropped ones included),
 *		with its class and what its class measures, in the current memory
 *		context.
 */
static ColumnState *
profile_states(TupleDesc tupdesc)
{
	ColumnState *states = palloc0(sizeof(ColumnState) * tupdesc->natts);

	for (int i = 0; i < tupdesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);
		ColumnState *st = &states[i];

		switch (att->atttypid)
		{
			case INT2OID:
			case INT4OID:
			case INT8OID:
				st->pclass = PC_INTEGER;
				break;
			case NUMERICOID:
				st->pclass = PC_NUMERIC;
				st->all_integers = true;
				break;
			case TEXTOID:
			case VARCHAROID:
				st->pclass = PC_TEXT;
				st->kind_mask = KIND_ALL;
				break;
			case BPCHAROID:
				st->pclass = PC_BPCHAR;
				st->kind_mask = KIND_ALL;
				break;
			default:
				st->pclass = att->attlen == -1 ? PC_VARLENA : PC_FIXED;
				break;
		}
	}
	return states;
}

/*
 * profile_value
 *		Account one non-NULL value of a column: its stored width (variable
 *		width), then what its class measures (bounds, kinds).
 */
static void
profile_value(ColumnState *st, Form_pg_attribute att, Datum value, MemoryContext colctx)
{
	st->nonnull++;
	if (att->attlen == -1)
	{
		double		w = VARSIZE_ANY(DatumGetPointer(value));

		st->width_sum += w;
		st->width_sq_sum += w * w;
	}

	switch (st->pclass)
	{
		case PC_INTEGER:
			note_integer(st, att->atttypid == INT2OID ? DatumGetInt16(value) :
						 att->atttypid == INT4OID ? DatumGetInt32(value) :
						 DatumGetInt64(value));
			break;
		case PC_NUMERIC:
			profile_numeric(st, value, colctx);
			break;
		case PC_TEXT:
		case PC_BPCHAR:
			profile_text(st, value);
			break;
		default:
			break;
	}
}

/*
 * profile_rows
 *		Scan the table once with the active snapshot, accounting every value
 *		of every live column in states (bounds kept in colctx); returns the
 *		number of rows.  Each row's values are read in a context reset after
 *		the row.
 */
static int64
profile_rows(Relation rel, ColumnState *states, MemoryContext colctx)
{
	TupleDesc	tupdesc = RelationGetDescr(rel);
	TableScanDesc scan;
	TupleTableSlot *slot;
	MemoryContext rowctx;
	int64		nrows = 0;

	rowctx = AllocSetContextCreate(CurrentMemoryContext,
								   "column_profile row",
								   ALLOCSET_DEFAULT_SIZES);
	slot = table_slot_create(rel, NULL);
	/*
	 * No SO_HINT_REL_READ_ONLY (PostgreSQL 19): with it, on-access pruning
	 * may also set visibility map bits, and this pass writes nothing of its
	 * own.
	 */
	scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL, SO_NONE);

	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		slot_getallattrs(slot);
		nrows++;

		old = MemoryContextSwitchTo(rowctx);
		for (int i = 0; i < tupdesc->natts; i++)
		{
			Form_pg_attribute att = TupleDescAttr(tupdesc, i);

			if (att->attisdropped || slot->tts_isnull[i])
				continue;
			profile_value(&states[i], att, slot->tts_values[i], colctx);
		}
		MemoryContextSwitchTo(old);
		MemoryContextReset(rowctx);
	}

	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	return nrows;
}

/*
 * profile_emit
 *		The result row of one live column: counts, width and its spread
 *		(variable width), bounds (integers, numerics, text of integers only),
 *		integrality (numeric), text kind, and trimmed width (char(n)).
 */
static void
profile_emit(ReturnSetInfo *rsinfo, Form_pg_attribute att, const ColumnState *st,
			 int64 nrows)
{
	Datum		values[10];
	bool		nulls[10];
	const char *kind = NULL;

	memset(nulls, true, sizeof(nulls));

	values[0] = Int16GetDatum(att->attnum);
	values[1] = Int64GetDatum(nrows);
	values[2] = Int64GetDatum(nrows - st->nonnull);
	nulls[0] = nulls[1] = nulls[2] = false;
	if (att->attlen == -1 && st->nonnull > 0)
	{
		double		mean = st->width_sum / st->nonnull;

		values[3] = Float8GetDatum(mean);
		values[9] = Float8GetDatum(sqrt(Max(st->width_sq_sum / st->nonnull - mean * mean, 0.0)));
		nulls[3] = nulls[9] = false;
	}
	if (st->nonnull > 0 && (st->pclass == PC_TEXT || st->pclass == PC_BPCHAR))
		kind = kind_name(st->kind_mask);
	if (st->have_bounds &&
		(st->pclass == PC_INTEGER ||
		 (kind != NULL && st->kind_mask == KIND_INTEGER && !st->int_overflow)))
	{
		values[4] = NumericGetDatum(int64_to_numeric(st->imin));
		values[5] = NumericGetDatum(int64_to_numeric(st->imax));
		nulls[4] = nulls[5] = false;
	}
	else if (st->have_bounds && st->pclass == PC_NUMERIC)
	{
		values[4] = st->nmin;
		values[5] = st->nmax;
		nulls[4] = nulls[5] = false;
	}
	if (st->pclass == PC_NUMERIC && st->nonnull > 0)
	{
		values[6] = BoolGetDatum(st->all_integers);
		nulls[6] = false;
	}
	if (kind != NULL)
	{
		values[7] = CStringGetTextDatum(kind);
		nulls[7] = false;
	}
	if (st->pclass == PC_BPCHAR && st->nonnull > 0)
	{
		values[8] = Float8GetDatum(st->trimmed_sum / st->nonnull);
		nulls[8] = false;
	}
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * storagelab_column_profile_scan
 *		column_profile_scan(relation regclass) returns setof (attnum int2,
 *		row_count int8, null_count int8, avg_width float8, min_value numeric,
 *		max_value numeric, all_integers bool, text_kind text,
 *		trimmed_avg_width float8, width_stddev float8), one row per live
 *		column.
 *
 * Opens the table with AccessShareLock after storagelab's relation checks
 * (SELECT privilege, ordinary heap table, not another session's temporary
 * table), refuses tables whose row-level security is active for the caller
 * (a profile of some rows would pass for exact), and scans it once with the
 * active snapshot.  Memory: constant per column, plus one value per row in a
 * context reset after each row.
 */
Datum
storagelab_column_profile_scan(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			relid = PG_GETARG_OID(0);
	Relation	rel;
	TupleDesc	tupdesc;
	ColumnState *states;
	int64		nrows;

	rel = storagelab_open_heap_relation(relid, SL_ALLOW_TABLE, "column_profile");
	storagelab_refuse_row_security(rel, "column_profile",
								   "A profile of the rows visible to this role would be reported as exact.");

	InitMaterializedSRF(fcinfo, 0);
	SL_CHECK_RESULT(rsinfo->setDesc, profile_result_types, "column_profile_scan");

	tupdesc = RelationGetDescr(rel);
	states = profile_states(tupdesc);
	nrows = profile_rows(rel, states, CurrentMemoryContext);

	for (int i = 0; i < tupdesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);

		if (!att->attisdropped)
			profile_emit(rsinfo, att, &states[i], nrows);
	}

	relation_close(rel, AccessShareLock);
	return (Datum) 0;
}

/* Sums over the values of a pg_statistic sample. */
typedef struct SampleSums
{
	double		weight;			/* sum of weights */
	double		width;			/* weighted stored widths */
	double		width_sq;		/* weighted squares of stored widths */
	double		trimmed;		/* weighted char(n) widths without padding */
} SampleSums;

/*
 * accumulate_sample
 *		Account the values of one pg_statistic array in st and sums: each
 *		with its frequency from freqs when given, else with weight.  Widths
 *		are those of the values stored in a heap tuple: a 1-byte varlena
 *		header when the value fits one, else 4 bytes.
 */
static void
accumulate_sample(ColumnState *st, SampleSums *sums, Oid typid, ArrayType *arr,
				  ArrayType *freqarr, double weight)
{
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	Datum	   *elems;
	bool	   *enulls;
	int			n;
	Datum	   *freqs = NULL;
	bool	   *fnulls = NULL;
	int			nfreqs = 0;

	if (ARR_ELEMTYPE(arr) != typid)
		return;					/* not the column's values */
	get_typlenbyvalalign(typid, &elmlen, &elmbyval, &elmalign);
	deconstruct_array(arr, typid, elmlen, elmbyval, elmalign, &elems, &enulls, &n);
	if (freqarr != NULL)
		deconstruct_array(freqarr, FLOAT4OID, sizeof(float4), true, TYPALIGN_INT,
						  &freqs, &fnulls, &nfreqs);

	for (int i = 0; i < n; i++)
	{
		double		w = freqarr ? (i < nfreqs && !fnulls[i] ? DatumGetFloat4(freqs[i]) : 0.0) :
			weight;

		if (enulls[i])
			continue;
		sums->weight += w;
		if (elmlen == -1)
		{
			Size		data = VARSIZE_ANY_EXHDR(DatumGetPointer(elems[i]));
			double		stored = data + (data + VARHDRSZ_SHORT <= VARATT_SHORT_MAX ?
										 VARHDRSZ_SHORT : VARHDRSZ);

			sums->width += w * stored;
			sums->width_sq += w * stored * stored;
		}

		switch (st->pclass)
		{
			case PC_INTEGER:
				note_integer(st, typid == INT2OID ? DatumGetInt16(elems[i]) :
							 typid == INT4OID ? DatumGetInt32(elems[i]) :
							 DatumGetInt64(elems[i]));
				break;
			case PC_NUMERIC:
				profile_numeric(st, elems[i], CurrentMemoryContext);
				break;
			case PC_TEXT:
			case PC_BPCHAR:
				{
					double		before = st->trimmed_sum;

					profile_text(st, elems[i]);
					sums->trimmed += w * (st->trimmed_sum - before);
					st->nonnull++;
				}
				break;
			default:
				break;
		}
	}
}

/*
 * storagelab_summarize_sample
 *		The facts column_profile_scan() computes from every row, computed with
 *		the same code from the sample ANALYZE kept in one pg_statistic row:
 *		the most common values (mcv) weighted by their frequencies (freqs),
 *		the histogram bounds (hist) sharing the remaining non-NULL fraction
 *		equally.  Any array may be NULL.  typid is the column's type; arrays
 *		of another element type are ignored.  With rules false only the
 *		widths are computed (no bounds, no text kinds): what the layout model
 *		needs.  Numeric bounds are allocated in the current memory context.
 */
void
storagelab_summarize_sample(Oid typid, double null_frac, ArrayType *mcv,
							ArrayType *freqs, ArrayType *hist, bool rules,
							SampleFacts *out)
{
	ColumnState st;
	SampleSums	sums = {0};
	const char *kind = NULL;

	memset(&st, 0, sizeof(st));
	memset(out, 0, sizeof(*out));
	switch (rules ? typid : InvalidOid)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
			st.pclass = PC_INTEGER;
			break;
		case NUMERICOID:
			st.pclass = PC_NUMERIC;
			st.all_integers = true;
			break;
		case TEXTOID:
		case VARCHAROID:
			st.pclass = PC_TEXT;
			st.kind_mask = KIND_ALL;
			break;
		case BPCHAROID:
			st.pclass = PC_BPCHAR;
			st.kind_mask = KIND_ALL;
			break;
		default:
			st.pclass = PC_VARLENA;
			break;
	}

	if (mcv != NULL && freqs != NULL)
		accumulate_sample(&st, &sums, typid, mcv, freqs, 0.0);
	if (hist != NULL && ARR_NDIM(hist) == 1 && ARR_DIMS(hist)[0] > 0)
		accumulate_sample(&st, &sums, typid, hist, NULL,
						  Max(1.0 - null_frac - sums.weight, 0.0) / ARR_DIMS(hist)[0]);

	if (sums.weight > 0.0 && sums.width > 0.0)
	{
		out->mean_width = sums.width / sums.weight;
		out->width_stddev = sqrt(Max(sums.width_sq / sums.weight -
									 out->mean_width * out->mean_width, 0.0));
		out->has_width = true;
	}
	if ((st.pclass == PC_TEXT || st.pclass == PC_BPCHAR) && st.nonnull > 0)
		kind = kind_name(st.kind_mask);
	if (st.have_bounds &&
		(st.pclass == PC_INTEGER ||
		 (kind != NULL && st.kind_mask == KIND_INTEGER && !st.int_overflow)))
	{
		out->min_value = NumericGetDatum(int64_to_numeric(st.imin));
		out->max_value = NumericGetDatum(int64_to_numeric(st.imax));
		out->has_bounds = true;
	}
	else if (st.have_bounds && st.pclass == PC_NUMERIC)
	{
		out->min_value = st.nmin;
		out->max_value = st.nmax;
		out->has_bounds = true;
	}
	if (st.pclass == PC_NUMERIC && st.have_bounds)
	{
		out->all_integers = st.all_integers;
		out->has_all_integers = true;
	}
	out->text_kind = kind;
	if (st.pclass == PC_BPCHAR && sums.weight > 0.0)
	{
		out->trimmed_avg_width = sums.trimmed / sums.weight;
		out->has_trimmed = true;
	}
}
