/*-------------------------------------------------------------------------
 *
 * column_layout.c
 *	  The heap tuple layout model behind storagelab.alignment_padding and
 *	  storagelab.column_waste.
 *
 * heap_tuple_bytes() predicts how many bytes an average row of a table takes
 * on a heap page, from per-column facts (typlen, typalign, typstorage,
 * average width, fraction of NULLs), following heap_fill_tuple(): a tuple
 * header of SizeofHeapTupleHeader bytes plus a null bitmap when any column is
 * NULL, MAXALIGN'd; each present attribute aligned by its typalign, except
 * varlena values short enough for a 1-byte header, which are stored
 * unaligned; NULLs take no data space; the whole tuple MAXALIGN'd by
 * PageAddItem().  NULLs are taken as independent between columns; the model
 * keeps the probability distribution of the data offset modulo MAXALIGN, so
 * that the padding a NULL-able column causes or saves is counted exactly
 * under that assumption.
 *
 * heap_pages() turns a tuple size and a row count into the number of pages
 * a freshly written table takes: the page header, one line pointer per
 * tuple, the fillfactor reserve and MaxHeapTuplesPerPage, as
 * RelationGetBufferForTuple() and raw_heap_insert() fill pages.
 *
 * Neither function reads a table; both are pure arithmetic.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "storage/bufpage.h"
#include "utils/array.h"
#include "utils/rel.h"

#include "compat.h"
#include "storagelab.h"

PG_FUNCTION_INFO_V1(storagelab_heap_tuple_bytes);
PG_FUNCTION_INFO_V1(storagelab_heap_pages);

/* heap_tuple_bytes(): tuple_bytes, padding_bytes, size_varies */
static const Oid layout_result_types[] = {FLOAT8OID, FLOAT8OID, BOOLOID};

/* Offsets are tracked modulo the largest alignment, MAXIMUM_ALIGNOF. */
#define SL_MODULUS	MAXIMUM_ALIGNOF

/*
 * typalign_bytes
 *		Alignment in bytes of a pg_type.typalign code.
 */
static int
typalign_bytes(char typalign)
{
	switch (typalign)
	{
		case TYPALIGN_CHAR:
			return 1;
		case TYPALIGN_SHORT:
			return ALIGNOF_SHORT;
		case TYPALIGN_INT:
			return ALIGNOF_INT;
		case TYPALIGN_DOUBLE:
			return ALIGNOF_DOUBLE;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid alignment code \"%c\"", typalign),
					 errhint("Pass pg_type.typalign: one of c, s, i, d.")));
	}
	return 1;					/* keep compiler quiet */
}

/* An attribute and its sort key, for a layout in another order. */
typedef struct SortItem
{
	int32		key;
	int			index;
} SortItem;

/*
 * sort_item_cmp
 *		Comparator: by key, then by original position.
 */
static int
sort_item_cmp(const void *a, const void *b)
{
	const SortItem *x = (const SortItem *) a;
	const SortItem *y = (const SortItem *) b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->index < y->index ? -1 : (x->index > y->index ? 1 : 0);
}

/*
 * array_elements
 *		Deconstruct a one-dimensional array argument without NULL elements,
 *		checking its element count against nelems (-1: any count).
 */
static Datum *
array_elements(ArrayType *arr, Oid elemtype, int16 elmlen, bool elmbyval,
			   char elmalign, const char *argname, int *nelems)
{
	Datum	   *values;
	bool	   *nulls;
	int			n;

	deconstruct_array(arr, elemtype, elmlen, elmbyval, elmalign,
					  &values, &nulls, &n);
	if (*nelems >= 0 && n != *nelems)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("argument \"%s\" has %d elements, expected %d",
						argname, n, *nelems),
				 errdetail("All arrays describe the same columns, one element per column.")));
	for (int i = 0; i < n; i++)
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("argument \"%s\" has a NULL element", argname),
					 errdetail("Element %d is NULL.", i + 1)));
	*nelems = n;
	return values;
}

/*
 * layout_order
 *		The order to lay the attributes out in, into order (ncols entries):
 *		attnum order, or with reorder the order of their keys leaving out
 *		negative keys.  Returns how many attributes are laid out.
 */
static int
layout_order(const LayoutColumn *cols, int ncols, bool reorder, SortItem *order)
{
	int			nlaid = 0;

	for (int i = 0; i < ncols; i++)
	{
		if (reorder && cols[i].key < 0)
			continue;
		order[nlaid].key = reorder ? cols[i].key : i;
		order[nlaid].index = i;
		nlaid++;
	}
	if (reorder)
	{
		/* insertion sort: rows have few columns, and keys are nearly sorted */
		for (int i = 1; i < nlaid; i++)
		{
			SortItem	item = order[i];
			int			j = i;

			while (j > 0 && sort_item_cmp(&order[j - 1], &item) > 0)
			{
				order[j] = order[j - 1];
				j--;
			}
			order[j] = item;
		}
	}
	return nlaid;
}

/*
 * column_alignment
 *		The alignment in bytes of a present value of the column, and its
 *		width (*width: typlen for a fixed-width type, else unchanged).
 */
static int
column_alignment(const LayoutColumn *col, double *width)
{
	if (col->len > 0)
	{
		/* fixed width: always aligned, always typlen bytes */
		*width = col->len;
		return typalign_bytes(col->align);
	}
	if (col->len == -1 && col->storage != TYPSTORAGE_PLAIN &&
		*width <= VARATT_SHORT_MAX)
		return 1;				/* packed into a 1-byte varlena header */
	if (col->len == -1)
		return typalign_bytes(col->align);
	return 1;					/* cstring: typalign 'c' */
}

/*
 * width_distribution
 *		How the width of a value is distributed modulo SL_MODULUS, into
 *		wdist: fixed-width values and variable-width ones of known spread 0
 *		always advance by the rounded width; a small spread as the two
 *		integers around the mean, a larger one as two equally likely widths,
 *		mean - spread and mean + spread (which keeps the mean and the
 *		variance); an unknown or wide one (over 8 bytes) leaves the offset
 *		uniformly distributed.  Returns the one width modulo SL_MODULUS when
 *		there is one, else -1.
 */
static int
width_distribution(int len, double width, double spread, double *wdist)
{
	memset(wdist, 0, sizeof(double) * SL_MODULUS);
	if (len != -1 || spread == 0.0)
	{
		/* one width: the offset moves by it (the common case, kept fast) */
		int			single = ((int) rint(width)) % SL_MODULUS;

		wdist[single] = 1.0;
		return single;
	}
	if (spread < 0.0 || isnan(spread) || spread > 8.0)
	{
		for (int j = 0; j < SL_MODULUS; j++)
			wdist[j] = 1.0 / SL_MODULUS;
	}
	else if (spread * spread <= (width - floor(width)) * (ceil(width) - width) + 0.25)
	{
		/*
		 * Nearly constant: the two integers around the mean, weighted to
		 * keep the mean (their variance is at most a quarter byte below the
		 * spread's).
		 */
		int			lo = (int) floor(width);
		double		frac = width - lo;

		wdist[lo % SL_MODULUS] += 1.0 - frac;
		wdist[(lo + 1) % SL_MODULUS] += frac;
	}
	else
	{
		/*
		 * Two points, mean - spread and mean + spread, match the mean and the
		 * variance; each is split between its neighbouring integers.
		 */
		for (int p = -1; p <= 1; p += 2)
		{
			double		point = Max(width + p * spread, 1.0);
			int			lo = (int) floor(point);
			double		frac = point - lo;

			wdist[lo % SL_MODULUS] += 0.5 * (1.0 - frac);
			wdist[(lo + 1) % SL_MODULUS] += 0.5 * frac;
		}
	}
	return -1;
}

/*
 * advance_offsets
 *		Move the distribution of the data offset (prob) past one attribute,
 *		present with probability present (NULL with nf), aligned to align,
 *		its width distributed as single or wdist (width_distribution());
 *		adds the expected alignment padding to *expected_len.
 */
static void
advance_offsets(double *prob, double present, double nf, int align, int single,
				const double *wdist, double *expected_len)
{
	double		next[SL_MODULUS];

	memset(next, 0, sizeof(next));
	for (int k = 0; k < SL_MODULUS; k++)
	{
		int			pad;

		if (prob[k] == 0.0)
			continue;
		pad = (int) TYPEALIGN(align, k) - k;
		*expected_len += present * prob[k] * pad;
		next[k] += nf * prob[k];
		if (single >= 0)
			next[(k + pad + single) % SL_MODULUS] += present * prob[k];
		else
			for (int j = 0; j < SL_MODULUS; j++)
				next[(k + pad + j) % SL_MODULUS] += present * prob[k] * wdist[j];
	}
	memcpy(prob, next, sizeof(next));
}

/*
 * storagelab_tuple_layout
 *		The layout model on C arrays: ncols columns in attnum order, laid out
 *		in that order or, with reorder, in the order of their keys leaving
 *		out negative keys.  See storagelab_heap_tuple_bytes() for what the
 *		fields mean.  Pure arithmetic; errors only on invalid input.
 */
void
storagelab_tuple_layout(const LayoutColumn *cols, int ncols, bool reorder,
						LayoutResult *out)
{
	double		prob[SL_MODULUS];	/* P(data offset % SL_MODULUS == k) */
	double		expected_len = 0.0; /* E[data length before final pad] */
	double		raw_bytes = 0.0;	/* E[bytes of attribute values] */
	double		p_no_null = 1.0;
	bool		size_varies = false;
	double		hoff_plain;
	double		hoff_nulls;
	double		header;
	double		tail_pad = 0.0;
	double		tuple_bytes;
	SortItem	order_buf[64];
	SortItem   *order = ncols <= lengthof(order_buf) ? order_buf :
		palloc(sizeof(SortItem) * ncols);
	int			nlaid;

	if (ncols > MaxTupleAttributeNumber)
		ereport(ERROR,
				(errcode(ERRCODE_TOO_MANY_COLUMNS),
				 errmsg("tuples can have at most %d columns",
						MaxTupleAttributeNumber)));
	nlaid = layout_order(cols, ncols, reorder, order);

	/* The data area starts MAXALIGN'd: offset 0. */
	memset(prob, 0, sizeof(prob));
	prob[0] = 1.0;

	for (int n = 0; n < nlaid; n++)
	{
		int			i = order[n].index;
		double		width = cols[i].width;
		double		nf = cols[i].null_frac;
		double		wdist[SL_MODULUS];
		int			single;		/* the one width modulo SL_MODULUS, or -1 */
		double		present;
		int			align;

		if (isnan(nf) || nf < 0.0 || nf > 1.0 || isnan(width) || width < 0.0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid width or null fraction for element %d", i + 1),
					 errdetail("Widths must be non-negative and null fractions between 0 and 1.")));

		present = 1.0 - nf;
		p_no_null *= present;
		if (present <= 0.0)
			continue;

		align = column_alignment(&cols[i], &width);
		single = width_distribution(cols[i].len, width, cols[i].spread, wdist);
		if (cols[i].len == -1 && cols[i].spread != 0.0)
			size_varies = true;
		advance_offsets(prob, present, nf, align, single, wdist, &expected_len);
		expected_len += present * width;
		raw_bytes += present * width;
	}

	for (int k = 1; k < SL_MODULUS; k++)
		tail_pad += prob[k] * (SL_MODULUS - k);

	/* header: 23 bytes, plus the null bitmap when any attribute is NULL */
	hoff_plain = MAXALIGN(SizeofHeapTupleHeader);
	hoff_nulls = MAXALIGN(SizeofHeapTupleHeader + BITMAPLEN(nlaid));
	header = p_no_null * hoff_plain + (1.0 - p_no_null) * hoff_nulls;

	tuple_bytes = header + expected_len + tail_pad;
	out->tuple_bytes = tuple_bytes;
	out->padding_bytes = tuple_bytes - raw_bytes -
		(SizeofHeapTupleHeader + (1.0 - p_no_null) * BITMAPLEN(nlaid));
	out->size_varies = size_varies;
	if (order != order_buf)
		pfree(order);
}

/*
 * storagelab_heap_tuple_bytes
 *		heap_tuple_bytes(lens int2[], aligns "char"[], storages "char"[],
 *						 widths float8[], null_fracs float8[],
 *						 width_spreads float8[], sort_keys int4[],
 *						 replace_index int4, replace_len int2,
 *						 replace_align "char", replace_storage "char",
 *						 replace_width float8, replace_key int4,
 *						 OUT tuple_bytes float8, OUT padding_bytes float8,
 *						 OUT size_varies bool)
 *
 * One array element per attribute of the tuple, in attnum order (dropped
 * attributes included, with null_frac 1, since a rewritten table stores them
 * as NULL).  sort_keys, when not NULL, lays the attributes out in the order
 * of their keys instead, leaving out those with a negative key (a new table
 * has no dropped columns).  replace_index (1-based), when not NULL, lays
 * that attribute out with another type's storage (and sort key), which is
 * how column_waste sizes a row after ALTER COLUMN ... TYPE.  NULL in one of
 * the arrays gives NULL.  widths gives the stored width of a non-NULL value: typlen for
 * fixed-width types, the average stored width (pg_stats.avg_width, which
 * counts the 1-byte or 4-byte varlena header) for variable-width ones;
 * width_spreads the standard deviation of variable widths (0: every value
 * has the same width; small: the two integers around the mean; larger: the
 * widths are taken as mean - spread and mean + spread, equally likely;
 * negative or over 8: the offset after such a value is taken as uniformly
 * distributed).
 *
 * tuple_bytes is the expected space a tuple takes on a page, MAXALIGN'd,
 * without its line pointer; padding_bytes is the part of it that is
 * alignment padding (header MAXALIGN, between attributes, and at the end);
 * size_varies tells whether tuples differ in size (a variable-width column
 * that is not always NULL), which heap_pages() needs.  The arithmetic is
 * storagelab_tuple_layout()'s.
 */
Datum
storagelab_heap_tuple_bytes(PG_FUNCTION_ARGS)
{
	int			natts = -1;
	Datum	   *lens;
	Datum	   *aligns;
	Datum	   *storages;
	Datum	   *widths;
	Datum	   *null_fracs;
	Datum	   *spreads;
	Datum	   *keys = NULL;
	LayoutColumn *cols;
	LayoutResult layout;
	TupleDesc	tupdesc;
	Datum		result[3];
	bool		result_nulls[3] = {false, false, false};

	tupdesc = SL_RESULT_DESC(fcinfo, layout_result_types, "heap_tuple_bytes");
	for (int a = 0; a < 6; a++)
		if (PG_ARGISNULL(a))
			PG_RETURN_NULL();

	lens = array_elements(PG_GETARG_ARRAYTYPE_P(0), INT2OID, sizeof(int16),
						  true, TYPALIGN_SHORT, "lens", &natts);
	aligns = array_elements(PG_GETARG_ARRAYTYPE_P(1), CHAROID, 1, true,
							TYPALIGN_CHAR, "aligns", &natts);
	storages = array_elements(PG_GETARG_ARRAYTYPE_P(2), CHAROID, 1, true,
							  TYPALIGN_CHAR, "storages", &natts);
	widths = array_elements(PG_GETARG_ARRAYTYPE_P(3), FLOAT8OID,
							sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
							"widths", &natts);
	null_fracs = array_elements(PG_GETARG_ARRAYTYPE_P(4), FLOAT8OID,
								sizeof(float8), FLOAT8PASSBYVAL,
								TYPALIGN_DOUBLE, "null_fracs", &natts);
	spreads = array_elements(PG_GETARG_ARRAYTYPE_P(5), FLOAT8OID,
							 sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
							 "width_spreads", &natts);
	if (!PG_ARGISNULL(6))
	{
		int			nkeys = natts;

		keys = array_elements(PG_GETARG_ARRAYTYPE_P(6), INT4OID,
							  sizeof(int32), true, TYPALIGN_INT,
							  "sort_keys", &nkeys);
	}

	cols = palloc(sizeof(LayoutColumn) * Max(natts, 1));
	for (int i = 0; i < natts; i++)
	{
		cols[i].len = DatumGetInt16(lens[i]);
		cols[i].align = DatumGetChar(aligns[i]);
		cols[i].storage = DatumGetChar(storages[i]);
		cols[i].width = DatumGetFloat8(widths[i]);
		cols[i].null_frac = DatumGetFloat8(null_fracs[i]);
		cols[i].spread = DatumGetFloat8(spreads[i]);
		cols[i].key = keys ? DatumGetInt32(keys[i]) : i;
	}

	/*
	 * One attribute may be replaced (the 1-based replace_index) by another
	 * type's storage: replace_len, replace_align, replace_storage,
	 * replace_width and, for the order, replace_key; its spread becomes 0
	 * for a fixed-width replacement.
	 */
	if (!PG_ARGISNULL(7))
	{
		int			r = PG_GETARG_INT32(7) - 1;

		if (r < 0 || r >= natts || PG_ARGISNULL(8) || PG_ARGISNULL(9) ||
			PG_ARGISNULL(10) || PG_ARGISNULL(11))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid replacement for element %d", r + 1),
					 errdetail("replace_index must name an element and the replacement's storage must be given.")));
		cols[r].len = PG_GETARG_INT16(8);
		cols[r].align = PG_GETARG_CHAR(9);
		cols[r].storage = PG_GETARG_CHAR(10);
		cols[r].width = PG_GETARG_FLOAT8(11);
		if (cols[r].len > 0)
			cols[r].spread = 0.0;
		if (keys != NULL && !PG_ARGISNULL(12) && PG_GETARG_INT32(12) >= 0)
			cols[r].key = PG_GETARG_INT32(12);
	}

	storagelab_tuple_layout(cols, natts, keys != NULL, &layout);
	result[0] = Float8GetDatum(layout.tuple_bytes);
	result[1] = Float8GetDatum(layout.padding_bytes);
	result[2] = BoolGetDatum(layout.size_varies);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, result,
													  result_nulls)));
}

/*
 * storagelab_heap_page_count
 *		Pages a freshly written heap of tuples rows of tuple_bytes bytes each
 *		(on average) takes at fillfactor (10 to 100).  A tuple goes on the
 *		current page while the page's free space, minus one line pointer,
 *		still holds it plus the fillfactor reserve
 *		(RelationGetBufferForTuple); at most MaxHeapTuplesPerPage per page; an
 *		empty page always takes one tuple.  Tuples of one size fill a page
 *		with a whole number of them; tuples of varying size fill it up to the
 *		first that does not fit, which leaves on average half a tuple of space
 *		unused.
 */
int64
storagelab_heap_page_count(double tuples, double tuple_bytes, int fillfactor,
						   bool size_varies)
{
	double		usable;
	double		per_page;

	if (tuples <= 0.0)
		return 0;
	usable = BLCKSZ - SizeOfPageHeaderData -
		(BLCKSZ * (100 - fillfactor) / 100);
	if (size_varies)
		per_page = usable / (tuple_bytes + sizeof(ItemIdData)) - 0.5;
	else
		per_page = floor(usable / (tuple_bytes + sizeof(ItemIdData)));
	per_page = Min(Max(per_page, 1.0), MaxHeapTuplesPerPage);

	return (int64) ceil(tuples / per_page);
}

/*
 * storagelab_heap_pages
 *		heap_pages(tuples float8, tuple_bytes float8, fillfactor int4,
 *				   size_varies bool) int8
 *
 * storagelab_heap_page_count() as SQL: a NULL fillfactor means the default.
 */
Datum
storagelab_heap_pages(PG_FUNCTION_ARGS)
{
	double		tuples;
	double		tuple_bytes;
	int			fillfactor = PG_ARGISNULL(2) ? HEAP_DEFAULT_FILLFACTOR :
		PG_GETARG_INT32(2);
	bool		size_varies = PG_ARGISNULL(3) ? false : PG_GETARG_BOOL(3);

	if (fillfactor < HEAP_MIN_FILLFACTOR || fillfactor > 100)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("fillfactor %d is out of range", fillfactor),
				 errdetail("Valid values are between \"%d\" and \"%d\".",
						   HEAP_MIN_FILLFACTOR, 100)));
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	tuples = PG_GETARG_FLOAT8(0);
	tuple_bytes = PG_GETARG_FLOAT8(1);
	if (isnan(tuples) || isnan(tuple_bytes) || tuple_bytes <= 0.0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("tuple size must be positive")));

	PG_RETURN_INT64(storagelab_heap_page_count(tuples, tuple_bytes,
											   fillfactor, size_varies));
}
