/*-------------------------------------------------------------------------
 *
 * column_stats.c
 *	  One pass over the catalogs for storagelab.column_facts: every column
 *	  of every ordinary table the caller may read, with its layout facts and
 *	  what its pg_statistic row says.
 *
 * column_statistics() backs the views column_facts, alignment_padding and
 * column_waste.  It walks pg_class, pg_attribute and pg_statistic once each,
 * in the order of their (relation OID, ...) indexes, and merges the three
 * walks, so its cost is linear in the number of columns and it fills no
 * catalog cache.  It reads the statistics arrays itself (typed values, never
 * their text form), and decodes most common values and histogram bounds
 * only where they matter: bounds and text kinds for the types the rules of
 * column_waste apply to, widths for variable-width types; of a fixed-width
 * column the layout needs stanullfrac only.
 *
 * Visibility follows pg_stats: a table is listed when the caller may read
 * every live column (SELECT on the table, or on each column), which is when
 * pg_stats would show the statistics of all of them; a table where some
 * column is hidden is left out, since its layout cannot be modelled without
 * it.  Under active row-level security (pg_stats's condition) the table is
 * listed without statistics.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/reloptions.h"
#include "access/table.h"
#include "catalog/catalog.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_class.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/numeric.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"

#include "compat.h"
#include "storagelab.h"

PG_FUNCTION_INFO_V1(storagelab_column_statistics);
PG_FUNCTION_INFO_V1(storagelab_table_layouts);
PG_FUNCTION_INFO_V1(storagelab_column_candidates);

/* One of the three ordered catalog walks. */
typedef struct CatalogWalk
{
	Relation	heap;
	Relation	index;
	SysScanDesc scan;
	HeapTuple	tuple;			/* current tuple, NULL at the end */
	MemoryContext cxt;			/* where the scan allocates */
} CatalogWalk;

/* Whether a namespace's tables are listed, cached by namespace OID. */
typedef struct NamespaceEntry
{
	Oid			nspid;			/* hash key */
	bool		listed;
} NamespaceEntry;

/*
 * walk_begin
 *		Start an ordered walk over a catalog through one of its indexes
 *		(AccessShareLock on both, the catalog snapshot), with at most one
 *		scan key (nkeys 0 or 1), which the index checks before any heap
 *		tuple is fetched.
 */
static void
walk_begin(CatalogWalk *w, Oid heapid, Oid indexid, int nkeys, ScanKey key)
{
	w->cxt = CurrentMemoryContext;
	w->heap = table_open(heapid, AccessShareLock);
	w->index = index_open(indexid, AccessShareLock);
	w->scan = systable_beginscan_ordered(w->heap, w->index, NULL, nkeys, key);
	w->tuple = systable_getnext_ordered(w->scan, ForwardScanDirection);
}

/*
 * walk_next
 *		Move a walk to its next tuple (the previous one is no longer valid).
 *		The scan may allocate state it keeps (the index AM does, lazily): in
 *		the walk's context, never in a per-table one.
 */
static void
walk_next(CatalogWalk *w)
{
	MemoryContext old = MemoryContextSwitchTo(w->cxt);

	w->tuple = systable_getnext_ordered(w->scan, ForwardScanDirection);
	MemoryContextSwitchTo(old);
}

/*
 * walk_end
 *		Finish a walk and release its locks.
 */
static void
walk_end(CatalogWalk *w)
{
	systable_endscan_ordered(w->scan);
	index_close(w->index, AccessShareLock);
	table_close(w->heap, AccessShareLock);
}

/*
 * namespace_listed
 *		Whether tables in the namespace are advised on: not the system
 *		schemas, TOAST or temporary schemas (the caller's own included, as
 *		their tables disappear with the session), nor storagelab's own.
 */
static bool
namespace_listed(HTAB *cache, Oid nspid, Oid own_nspid)
{
	NamespaceEntry *entry;
	bool		found;

	entry = hash_search(cache, &nspid, HASH_ENTER, &found);
	if (!found)
	{
		char	   *name = get_namespace_name(nspid);

		entry->listed = name != NULL &&
			nspid != PG_CATALOG_NAMESPACE && nspid != own_nspid &&
			!IsToastNamespace(nspid) && !isAnyTempNamespace(nspid) &&
			strcmp(name, "information_schema") != 0 &&
			strncmp(name, "pg_toast", 8) != 0 &&
			strncmp(name, "pg_temp_", 8) != 0;
	}
	return entry->listed;
}

/*
 * table_readable
 *		Whether the caller may read the statistics of every live column of
 *		the table: SELECT on it, or SELECT on each of its columns (which is
 *		what pg_stats's has_column_privilege() asks per column).
 */
static bool
table_readable(Oid relid, Oid roleid)
{
	bool		is_missing = false;

	if (pg_class_aclcheck_ext(relid, roleid, ACL_SELECT, &is_missing) == ACLCHECK_OK)
		return true;
	if (is_missing)
		return false;			/* dropped since the walk's snapshot */
	return pg_attribute_aclcheck_all(relid, roleid, ACL_SELECT,
									 ACLMASK_ALL) == ACLCHECK_OK;
}

/*
 * statistic_array
 *		The values or numbers array of the first slot of kind in a
 *		pg_statistic tuple (detoasted into the current memory context), or
 *		NULL.
 */
static ArrayType *
statistic_array(HeapTuple tuple, TupleDesc desc, int16 kind, bool numbers)
{
	Form_pg_statistic form = (Form_pg_statistic) GETSTRUCT(tuple);
	int16		kinds[STATISTIC_NUM_SLOTS] = {form->stakind1, form->stakind2,
		form->stakind3, form->stakind4, form->stakind5};

	for (int k = 0; k < STATISTIC_NUM_SLOTS; k++)
	{
		bool		isnull;
		Datum		d;

		if (kinds[k] != kind)
			continue;
		d = heap_getattr(tuple, (numbers ? Anum_pg_statistic_stanumbers1 :
								 Anum_pg_statistic_stavalues1) + k,
						 desc, &isnull);
		return isnull ? NULL : DatumGetArrayTypeP(d);
	}
	return NULL;
}

/*
 * rules_apply_to
 *		Whether column_waste has a rule for the type (so bounds, integrality
 *		and text kinds are worth decoding from the sample).
 */
static bool
rules_apply_to(Oid typid)
{
	switch (typid)
	{
		case INT4OID:
		case INT8OID:
		case NUMERICOID:
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
			return true;
		default:
			return false;
	}
}

/* Where a column's data facts come from. */
typedef enum FactSource
{
	FS_NONE,					/* never analyzed, nor profiled */
	FS_STATISTICS,				/* pg_statistic */
	FS_EXACT					/* storagelab.column_profiles */
} FactSource;

/* storagelab.column_profiles, as the install script creates it. */
#define PROF_NATTS				15
#define PROF_RELID				0
#define PROF_ATTNUM				1
#define PROF_ATTNAME			2
#define PROF_ATTTYPID			3
#define PROF_ATTTYPMOD			4
#define PROF_PROFILED_AT		5
#define PROF_ROW_COUNT			6
#define PROF_NULL_COUNT			7
#define PROF_AVG_WIDTH			8
#define PROF_MIN_VALUE			9
#define PROF_MAX_VALUE			10
#define PROF_ALL_INTEGERS		11
#define PROF_TEXT_KIND			12
#define PROF_TRIMMED_AVG_WIDTH	13
#define PROF_WIDTH_STDDEV		14

/* One column of a table, with everything the three outputs need. */
typedef struct ColumnInfo
{
	int16		attnum;
	NameData	attname;
	bool		dropped;
	Oid			typid;
	int32		typmod;
	int16		len;
	char		align;
	char		storage;
	bool		notnull;
	const char *protected_because;	/* identity, generated, inherited */
	FactSource	source;
	/* pg_statistic */
	bool		has_stats;
	double		stat_null_frac;
	int32		stawidth;
	SampleFacts sample;
	/* column_profiles row (source exact), copied */
	Datum		prof[PROF_NATTS];
	bool		prof_null[PROF_NATTS];
	/* resolved facts, as column_facts shows them */
	bool		null_frac_null;
	double		null_frac;
	bool		avg_width_null;
	double		avg_width;
	double		spread;
	int32		order_key;
} ColumnInfo;

/* One table being walked. */
typedef struct TableInfo
{
	Oid			relid;
	double		reltuples;
	int32		relpages;
	bool		fillfactor_set;
	int32		fillfactor;
	bool		rls_active;
	int			ncols;
	ColumnInfo *cols;
} TableInfo;

/* What a call emits. */
typedef enum WalkOutput
{
	WO_COLUMNS,					/* column_statistics(): one row per column */
	WO_TABLES,					/* table_layouts(): one row per table */
	WO_CANDIDATES				/* column_candidates(): one row per column a
								 * type rule may apply to */
} WalkOutput;

/* Bounds of the type rules (half the narrower type's range), as numerics. */
typedef struct RuleBounds
{
	Datum		int2_lo,
				int2_hi,
				int4_lo,
				int4_hi,
				int8_lo,
				int8_hi;
} RuleBounds;

/*
 * order_key
 *		Sort key of the suggested column order: fixed width by alignment
 *		descending, then variable width; NOT NULL first within each; then the
 *		column's position.
 */
static int32
order_key(int16 len, char align, bool notnull, int16 attnum)
{
	int			cls;

	if (len < 0)
		cls = 4;
	else if (align == TYPALIGN_DOUBLE)
		cls = 0;
	else if (align == TYPALIGN_INT)
		cls = 1;
	else if (align == TYPALIGN_SHORT)
		cls = 2;
	else
		cls = 3;
	return (cls * 2 + (notnull ? 0 : 1)) * 2000 + attnum;
}

/*
 * resolve_facts
 *		The facts of one column as column_facts shows them: from its profile
 *		when current (same name, type and typmod), else from pg_statistic;
 *		the null fraction, the average stored width of a non-NULL value and
 *		its spread (see storagelab_tuple_layout()), and the sort key.
 */
static void
resolve_facts(ColumnInfo *c)
{
	c->order_key = order_key(c->len, c->align, c->notnull, c->attnum);
	c->null_frac_null = false;
	c->avg_width_null = false;
	if (c->dropped)
	{
		c->source = FS_NONE;
		c->null_frac = 1.0;
		c->avg_width = 0.0;
		c->spread = 0.0;
		return;
	}
	if (c->source == FS_EXACT)
	{
		int64		rows = DatumGetInt64(c->prof[PROF_ROW_COUNT]);

		c->null_frac_null = rows <= 0;
		c->null_frac = rows > 0 ?
			(double) DatumGetInt64(c->prof[PROF_NULL_COUNT]) / rows : 0.0;
		if (c->len > 0)
			c->avg_width = c->len;
		else
			c->avg_width = c->prof_null[PROF_AVG_WIDTH] ? 0.0 :
				DatumGetFloat8(c->prof[PROF_AVG_WIDTH]);
		c->spread = (c->len > 0 || c->prof_null[PROF_WIDTH_STDDEV]) ? 0.0 :
			DatumGetFloat8(c->prof[PROF_WIDTH_STDDEV]);
		return;
	}
	c->source = c->has_stats ? FS_STATISTICS : FS_NONE;
	c->null_frac_null = !c->has_stats;
	c->null_frac = c->has_stats ? c->stat_null_frac : 0.0;
	if (c->len > 0)
	{
		c->avg_width = c->len;
		c->spread = 0.0;
		return;
	}

	/*
	 * ANALYZE truncates the average width to an integer, so the true mean
	 * lies in [stawidth, stawidth + 1): take the mean of the sampled values
	 * (most common values and histogram bounds) moved into that interval
	 * when it falls outside (the histogram bounds are quantiles, not a
	 * random sample: a column of 6- and 7-byte values can show only 7-byte
	 * bounds), and half a byte more when there are no sampled values.
	 */
	if (!c->has_stats)
		c->avg_width_null = true;
	else if (c->sample.has_width)
		c->avg_width = Min(Max(c->sample.mean_width, (double) c->stawidth),
						   c->stawidth + 0.999);
	else
		c->avg_width = c->stawidth + 0.5;
	c->spread = c->sample.has_width ? c->sample.width_stddev : -1.0;
}

/*
 * table_tuples
 *		Rows the estimates are for: pg_class.reltuples when known, else the
 *		most rows a profile of one of its columns saw; false when neither.
 */
static bool
table_tuples(const TableInfo *t, double *tuples)
{
	bool		found = false;

	if (t->reltuples >= 0)
	{
		*tuples = t->reltuples;
		return true;
	}
	for (int i = 0; i < t->ncols; i++)
	{
		const ColumnInfo *c = &t->cols[i];

		if (c->source == FS_EXACT &&
			(!found || DatumGetInt64(c->prof[PROF_ROW_COUNT]) > *tuples))
		{
			*tuples = DatumGetInt64(c->prof[PROF_ROW_COUNT]);
			found = true;
		}
	}
	return found;
}

/*
 * layout_columns
 *		The table's columns as the layout model takes them (NULL facts as 0).
 */
static LayoutColumn *
layout_columns(const TableInfo *t)
{
	LayoutColumn *lc = palloc(sizeof(LayoutColumn) * Max(t->ncols, 1));

	for (int i = 0; i < t->ncols; i++)
	{
		const ColumnInfo *c = &t->cols[i];

		lc[i].len = c->len;
		lc[i].align = c->align;
		lc[i].storage = c->storage;
		lc[i].width = c->avg_width_null ? 0.0 : c->avg_width;
		lc[i].null_frac = c->null_frac_null ? 0.0 : c->null_frac;
		lc[i].spread = c->spread;
		lc[i].key = c->dropped ? -1 : c->order_key;
	}
	return lc;
}

/*
 * numeric_within
 *		Whether lo >= min and hi <= max (numerics; false when either is
 *		missing).
 */
static bool
numeric_within(bool have, Datum lo, Datum hi, Datum min, Datum max)
{
	return have &&
		DatumGetInt32(DirectFunctionCall2(numeric_cmp, lo, min)) >= 0 &&
		DatumGetInt32(DirectFunctionCall2(numeric_cmp, hi, max)) <= 0;
}

/*
 * column_rule
 *		The first column_waste rule that applies to a candidate column (see
 *		the view for their numbers), or 0; with the new type's storage.
 *		Facts from the profile when exact, else from the sample.
 */
static int
column_rule(const ColumnInfo *c, const RuleBounds *b, bool *have_bounds,
			Datum *lo, Datum *hi, bool *have_trimmed, double *trimmed,
			LayoutColumn *now)
{
	bool		exact = c->source == FS_EXACT;
	const char *kind;
	bool		all_int;
	bool		all_int_known;
	int			rule = 0;

	if (exact)
	{
		*have_bounds = !c->prof_null[PROF_MIN_VALUE] && !c->prof_null[PROF_MAX_VALUE];
		*lo = c->prof[PROF_MIN_VALUE];
		*hi = c->prof[PROF_MAX_VALUE];
		all_int_known = !c->prof_null[PROF_ALL_INTEGERS];
		all_int = all_int_known && DatumGetBool(c->prof[PROF_ALL_INTEGERS]);
		kind = c->prof_null[PROF_TEXT_KIND] ? NULL :
			TextDatumGetCString(c->prof[PROF_TEXT_KIND]);
		*have_trimmed = !c->prof_null[PROF_TRIMMED_AVG_WIDTH];
		*trimmed = *have_trimmed ? DatumGetFloat8(c->prof[PROF_TRIMMED_AVG_WIDTH]) : 0.0;
	}
	else
	{
		*have_bounds = c->sample.has_bounds;
		*lo = c->sample.min_value;
		*hi = c->sample.max_value;
		all_int = c->sample.has_all_integers && c->sample.all_integers;
		kind = c->sample.text_kind;
		*have_trimmed = c->sample.has_trimmed;
		*trimmed = c->sample.trimmed_avg_width;
	}
	if (c->source == FS_NONE)
		return 0;

	if ((c->typid == INT8OID || c->typid == INT4OID) &&
		numeric_within(*have_bounds, *lo, *hi, b->int2_lo, b->int2_hi))
		rule = 1;
	else if (c->typid == INT8OID &&
			 numeric_within(*have_bounds, *lo, *hi, b->int4_lo, b->int4_hi))
		rule = 2;
	else if (c->typid == NUMERICOID && all_int &&
			 numeric_within(*have_bounds, *lo, *hi, b->int4_lo, b->int4_hi))
		rule = 3;
	else if (c->typid == NUMERICOID && all_int &&
			 numeric_within(*have_bounds, *lo, *hi, b->int8_lo, b->int8_hi))
		rule = 4;
	else if (c->typid != TEXTOID && c->typid != VARCHAROID && c->typid != BPCHAROID)
		rule = 0;
	else if (kind != NULL && strcmp(kind, "uuid") == 0)
		rule = 5;
	else if (kind != NULL && strcmp(kind, "integer") == 0 &&
			 numeric_within(*have_bounds, *lo, *hi, b->int2_lo, b->int2_hi))
		rule = 6;
	else if (kind != NULL && strcmp(kind, "integer") == 0 &&
			 numeric_within(*have_bounds, *lo, *hi, b->int4_lo, b->int4_hi))
		rule = 7;
	else if (kind != NULL && strcmp(kind, "integer") == 0 &&
			 numeric_within(*have_bounds, *lo, *hi, b->int8_lo, b->int8_hi))
		rule = 8;
	else if (kind != NULL && strcmp(kind, "boolean") == 0)
		rule = 9;
	else if (kind != NULL && strcmp(kind, "date") == 0)
		rule = 10;
	else if (kind != NULL && strcmp(kind, "timestamp") == 0)
		rule = 11;
	else if (kind != NULL && strcmp(kind, "timestamptz") == 0)
		rule = 12;
	else if (c->typid == BPCHAROID && kind == NULL && *have_trimmed &&
			 !c->avg_width_null && c->avg_width - *trimmed >= 1)
		rule = 13;

	/* the suggested type's storage */
	now->storage = TYPSTORAGE_PLAIN;
	now->spread = 0.0;
	switch (rule)
	{
		case 1:
		case 6:
			now->len = 2;
			now->align = TYPALIGN_SHORT;
			break;
		case 2:
		case 3:
		case 7:
		case 10:
			now->len = 4;
			now->align = TYPALIGN_INT;
			break;
		case 4:
		case 8:
		case 11:
		case 12:
			now->len = 8;
			now->align = TYPALIGN_DOUBLE;
			break;
		case 5:
			now->len = 16;
			now->align = TYPALIGN_CHAR;
			break;
		case 9:
			now->len = 1;
			now->align = TYPALIGN_CHAR;
			break;
		case 13:
			now->len = -1;
			now->align = TYPALIGN_INT;
			now->storage = TYPSTORAGE_EXTENDED;
			now->width = *trimmed;
			now->spread = c->spread;
			break;
		default:
			break;
	}
	if (rule != 0 && now->len > 0)
		now->width = now->len;
	return rule;
}

/*
 * rule_words
 *		The suggested type and the reason of a column_waste rule, in words.
 */
static void
rule_words(int rule, const ColumnInfo *c, Datum lo, Datum hi, double trimmed,
		   char **type, char **reason)
{
	static const char *const types[] = {NULL, "smallint", "integer", "integer",
		"bigint", "uuid", "smallint", "integer", "bigint", "boolean", "date",
		"timestamp without time zone", "timestamp with time zone"};
	char	   *los = NULL;
	char	   *his = NULL;

	if (rule <= 4 || (rule >= 6 && rule <= 8))
	{
		los = DatumGetCString(DirectFunctionCall1(numeric_out, lo));
		his = DatumGetCString(DirectFunctionCall1(numeric_out, hi));
	}
	*type = rule == 13 ? psprintf("character varying(%d)", c->typmod - VARHDRSZ) :
		pstrdup(types[rule]);
	switch (rule)
	{
		case 1:
		case 2:
			*reason = psprintf("values from %s to %s fit %s with headroom (at most half its range)",
							   los, his, types[rule]);
			break;
		case 3:
		case 4:
			*reason = psprintf("only integers, from %s to %s: %s holds them with headroom",
							   los, his, types[rule]);
			break;
		case 5:
			*reason = pstrdup("only UUIDs");
			break;
		case 6:
		case 7:
		case 8:
			*reason = psprintf("only integers, from %s to %s", los, his);
			break;
		case 9:
			*reason = pstrdup("only booleans");
			break;
		case 10:
			*reason = pstrdup("only dates (YYYY-MM-DD)");
			break;
		case 11:
			*reason = pstrdup("only timestamps without time zone");
			break;
		case 12:
			*reason = pstrdup("only timestamps with time zone");
			break;
		default:
			{
				/* round(x::numeric, 1), as the reason always printed it */
				Datum		pad = DirectFunctionCall2(numeric_round,
													  DirectFunctionCall1(float8_numeric,
																		  Float8GetDatum(c->avg_width - trimmed)),
													  Int32GetDatum(1));
				Datum		all = DirectFunctionCall2(numeric_round,
													  DirectFunctionCall1(float8_numeric,
																		  Float8GetDatum(c->avg_width)),
													  Int32GetDatum(1));

				*reason = psprintf("blank padding: %s of %s bytes per value",
								   DatumGetCString(DirectFunctionCall1(numeric_out, pad)),
								   DatumGetCString(DirectFunctionCall1(numeric_out, all)));
			}
			break;
	}
}

/*
 * emit_columns
 *		column_statistics(): one row per column of the table.
 */
static void
emit_columns(ReturnSetInfo *rsinfo, const TableInfo *t)
{
	for (int i = 0; i < t->ncols; i++)
	{
		const ColumnInfo *c = &t->cols[i];
		Datum		v[31];
		bool		n[31];
		const SampleFacts *sf = &c->sample;

		memset(n, true, sizeof(n));
		v[0] = ObjectIdGetDatum(t->relid);
		v[1] = Float8GetDatum(t->reltuples);
		v[2] = Int32GetDatum(t->relpages);
		v[3] = Int32GetDatum(t->fillfactor);
		v[4] = Int16GetDatum(c->attnum);
		v[5] = NameGetDatum(&c->attname);
		v[6] = BoolGetDatum(c->dropped);
		v[7] = ObjectIdGetDatum(c->typid);
		v[8] = Int32GetDatum(c->typmod);
		v[9] = Int16GetDatum(c->len);
		v[10] = CharGetDatum(c->align);
		v[11] = CharGetDatum(c->storage);
		v[12] = BoolGetDatum(c->notnull);
		v[13] = Int32GetDatum(c->order_key);
		for (int k = 0; k <= 13; k++)
			n[k] = false;
		n[3] = !t->fillfactor_set;
		if (c->protected_because)
		{
			v[14] = CStringGetTextDatum(c->protected_because);
			n[14] = false;
		}
		if (c->source != FS_NONE)
		{
			v[15] = CStringGetTextDatum(c->source == FS_EXACT ? "exact" : "statistics");
			n[15] = false;
		}
		if (c->source == FS_EXACT)
		{
			v[16] = c->prof[PROF_PROFILED_AT];
			v[17] = c->prof[PROF_ROW_COUNT];
			n[16] = n[17] = false;
			for (int k = 0; k < 5; k++)
			{
				v[20 + k] = c->prof[PROF_MIN_VALUE + k];
				n[20 + k] = c->prof_null[PROF_MIN_VALUE + k];
			}
		}
		v[18] = Float8GetDatum(c->null_frac);
		n[18] = c->null_frac_null;
		v[19] = Float8GetDatum(c->avg_width);
		n[19] = c->avg_width_null;
		if (c->source == FS_STATISTICS)
		{
			v[25] = sf->min_value;
			v[26] = sf->max_value;
			n[25] = n[26] = !sf->has_bounds;
			v[27] = BoolGetDatum(sf->all_integers);
			n[27] = !sf->has_all_integers;
			if (sf->text_kind)
			{
				v[28] = CStringGetTextDatum(sf->text_kind);
				n[28] = false;
			}
			v[29] = Float8GetDatum(sf->trimmed_avg_width);
			n[29] = !sf->has_trimmed;
		}
		v[30] = Float8GetDatum(c->spread);
		n[30] = false;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, n);
	}
}

/*
 * emit_table
 *		table_layouts(): the table's rows in their current order and in the
 *		suggested one (alignment_padding).
 */
static void
emit_table(ReturnSetInfo *rsinfo, const TableInfo *t)
{
	Datum		v[14];
	bool		n[14];
	Datum	   *current = palloc(sizeof(Datum) * Max(t->ncols, 1));
	Datum	   *suggested = palloc(sizeof(Datum) * Max(t->ncols, 1));
	int			nlive = 0;
	bool		missing = false;
	bool		all_exact = true;
	double		tuples = 0.0;
	bool		have_tuples;
	LayoutColumn *lc;
	int			fillfactor = t->fillfactor_set ? t->fillfactor : HEAP_DEFAULT_FILLFACTOR;

	for (int i = 0; i < t->ncols; i++)
	{
		const ColumnInfo *c = &t->cols[i];

		if (c->dropped)
			continue;
		current[nlive++] = NameGetDatum(&c->attname);
		if (c->source == FS_NONE)
			missing = true;
		if (c->source != FS_EXACT)
			all_exact = false;
	}
	if (nlive == 0)
		return;

	/* the suggested order: live columns by their (unique) keys */
	lc = layout_columns(t);
	{
		int			k = 0;
		int32	   *keys = palloc(sizeof(int32) * nlive);
		int		   *idx = palloc(sizeof(int) * nlive);

		/* insertion sort: tables have few columns, mostly in order */
		for (int i = 0; i < t->ncols; i++)
		{
			int			j;

			if (t->cols[i].dropped)
				continue;
			j = k++;
			while (j > 0 && keys[j - 1] > t->cols[i].order_key)
			{
				keys[j] = keys[j - 1];
				idx[j] = idx[j - 1];
				j--;
			}
			keys[j] = t->cols[i].order_key;
			idx[j] = i;
		}
		for (int j = 0; j < nlive; j++)
			suggested[j] = NameGetDatum(&t->cols[idx[j]].attname);
	}

	have_tuples = table_tuples(t, &tuples);
	memset(n, true, sizeof(n));
	v[0] = ObjectIdGetDatum(t->relid);
	n[0] = false;
	if (have_tuples)
	{
		v[1] = Float8GetDatum(tuples);
		n[1] = false;
	}
	v[2] = BoolGetDatum(missing);
	v[3] = BoolGetDatum(all_exact);
	v[4] = PointerGetDatum(construct_array(current, nlive, NAMEOID, NAMEDATALEN,
										   false, TYPALIGN_CHAR));
	v[5] = PointerGetDatum(construct_array(suggested, nlive, NAMEOID, NAMEDATALEN,
										   false, TYPALIGN_CHAR));
	n[2] = n[3] = n[4] = n[5] = false;
	if (!missing && have_tuples)
	{
		LayoutResult now;
		LayoutResult after;

		storagelab_tuple_layout(lc, t->ncols, false, &now);
		storagelab_tuple_layout(lc, t->ncols, true, &after);
		v[6] = Float8GetDatum(now.tuple_bytes);
		v[7] = Float8GetDatum(now.padding_bytes);
		v[8] = Float8GetDatum(after.tuple_bytes);
		v[9] = Int64GetDatum(storagelab_heap_page_count(tuples, now.tuple_bytes,
														fillfactor, now.size_varies));
		v[10] = Int64GetDatum(storagelab_heap_page_count(tuples, after.tuple_bytes,
														 fillfactor, after.size_varies));
		for (int k = 6; k <= 10; k++)
			n[k] = false;
	}
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, n);
}

/*
 * emit_candidates
 *		column_candidates(): one row per column some type rule may apply to
 *		(int4, int8, numeric, text, varchar, char(n) with a length, not
 *		dropped, not an identity, generated or inherited column) that has a
 *		rule or has no facts; with the row sizes before and after the change,
 *		in the current and in the suggested order (column_waste).
 */
static void
emit_candidates(ReturnSetInfo *rsinfo, const TableInfo *t, const RuleBounds *b,
				HTAB *skip)
{
	LayoutColumn *lc = NULL;
	LayoutResult now;
	LayoutResult reordered;
	double		tuples = 0.0;
	bool		have_tuples = false;
	int			fillfactor = t->fillfactor_set ? t->fillfactor : HEAP_DEFAULT_FILLFACTOR;

	for (int i = 0; i < t->ncols; i++)
	{
		const ColumnInfo *c = &t->cols[i];
		Datum		v[18];
		bool		n[18];
		bool		have_bounds;
		Datum		lo;
		Datum		hi;
		bool		have_trimmed;
		double		trimmed;
		LayoutColumn changed_col;
		int			rule;

		if (c->dropped || c->protected_because != NULL || !rules_apply_to(c->typid) ||
			(c->typid == BPCHAROID && c->typmod <= VARHDRSZ))
			continue;
		if (skip != NULL)
		{
			uint64		key = ((uint64) t->relid << 16) | (uint16) c->attnum;

			if (hash_search(skip, &key, HASH_FIND, NULL) != NULL)
				continue;
		}
		rule = column_rule(c, b, &have_bounds, &lo, &hi, &have_trimmed, &trimmed,
						   &changed_col);
		if (rule == 0 && c->source != FS_NONE)
			continue;

		memset(n, true, sizeof(n));
		v[0] = ObjectIdGetDatum(t->relid);
		v[1] = Int16GetDatum(c->attnum);
		v[2] = NameGetDatum(&c->attname);
		v[3] = ObjectIdGetDatum(c->typid);
		v[4] = Int32GetDatum(c->typmod);
		v[5] = BoolGetDatum(c->notnull);
		for (int k = 0; k <= 5; k++)
			n[k] = false;
		if (c->source != FS_NONE)
		{
			v[6] = CStringGetTextDatum(c->source == FS_EXACT ? "exact" : "statistics");
			n[6] = false;
		}
		v[7] = Float8GetDatum(c->null_frac);
		n[7] = c->null_frac_null;
		if (c->source == FS_EXACT)
		{
			v[8] = c->prof[PROF_PROFILED_AT];
			n[8] = false;
		}
		if (lc == NULL)
		{
			lc = layout_columns(t);
			have_tuples = table_tuples(t, &tuples);
			storagelab_tuple_layout(lc, t->ncols, false, &now);
			storagelab_tuple_layout(lc, t->ncols, true, &reordered);
		}
		if (have_tuples)
		{
			v[9] = Float8GetDatum(tuples);
			n[9] = false;
		}
		if (rule != 0)
		{
			LayoutColumn saved = lc[i];
			LayoutResult changed;
			LayoutResult changed_reordered;

			v[10] = Int32GetDatum(rule);
			n[10] = false;
			if (have_bounds)
			{
				v[11] = lo;
				v[12] = hi;
				n[11] = n[12] = false;
			}
			{
				char	   *type;
				char	   *reason;

				rule_words(rule, c, lo, hi, trimmed, &type, &reason);
				v[13] = CStringGetTextDatum(type);
				v[14] = CStringGetTextDatum(reason);
				n[13] = n[14] = false;
			}

			changed_col.null_frac = saved.null_frac;
			changed_col.key = order_key(changed_col.len, changed_col.align,
										c->notnull, c->attnum);
			lc[i] = changed_col;
			storagelab_tuple_layout(lc, t->ncols, false, &changed);
			storagelab_tuple_layout(lc, t->ncols, true, &changed_reordered);
			lc[i] = saved;

			v[15] = Float8GetDatum(now.tuple_bytes - changed.tuple_bytes);
			v[16] = Float8GetDatum(reordered.tuple_bytes - changed_reordered.tuple_bytes);
			n[15] = n[16] = false;
			if (have_tuples)
			{
				v[17] = Int64GetDatum(storagelab_heap_page_count(tuples, now.tuple_bytes,
																 fillfactor, now.size_varies) -
									  storagelab_heap_page_count(tuples, changed.tuple_bytes,
																 fillfactor, changed.size_varies));
				n[17] = false;
			}
		}
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, n);
	}
}

/*
 * profile_walk_begin
 *		Start the walk over storagelab.column_profiles in primary key order
 *		(relid, attnum), with the query's snapshot; false when the table is
 *		not there.
 */
static bool
profile_walk_begin(CatalogWalk *w, Oid own_nspid)
{
	Oid			relid;
	Oid			indexid;

	if (!OidIsValid(own_nspid))
		return false;
	relid = get_relname_relid("column_profiles", own_nspid);
	indexid = get_relname_relid("column_profiles_pkey", own_nspid);
	if (!OidIsValid(relid) || !OidIsValid(indexid))
		return false;
	w->cxt = CurrentMemoryContext;
	w->heap = table_open(relid, AccessShareLock);
	if (RelationGetDescr(w->heap)->natts != PROF_NATTS)
		elog(ERROR, "storagelab.column_profiles has %d columns, expected %d",
			 RelationGetDescr(w->heap)->natts, PROF_NATTS);
	w->index = index_open(indexid, AccessShareLock);
	w->scan = systable_beginscan_ordered(w->heap, w->index, GetActiveSnapshot(),
										 0, NULL);
	w->tuple = systable_getnext_ordered(w->scan, ForwardScanDirection);
	return true;
}

/*
 * column_walk
 *		The walk behind the three SQL functions: every ordinary table in a
 *		listed schema that the caller may read (see the file header), its
 *		columns with their statistics and current profiles, emitted as the
 *		output asks.  Takes AccessShareLock on pg_class, pg_attribute,
 *		pg_statistic, storagelab.column_profiles and their indexes only;
 *		never locks, opens or reads a user table.  Memory: one table at a
 *		time, in a context reset after each.
 */
static void
column_walk(FunctionCallInfo fcinfo, WalkOutput output, HTAB *skip)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			roleid = GetUserId();
	Oid			own_nspid = get_namespace_oid("storagelab", true);
	CatalogWalk classes;
	CatalogWalk attrs;
	CatalogWalk stats;
	CatalogWalk profiles = {0};
	bool		have_profiles;
	ScanKeyData attnum_key;
	TupleDesc	class_desc;
	TupleDesc	stat_desc;
	TupleDesc	prof_desc = NULL;
	HASHCTL		hctl;
	HTAB	   *nsp_cache;
	MemoryContext tablectx;
	RuleBounds	bounds;
	int			maxcols = MaxHeapAttributeNumber;
	ColumnInfo *cols;

	InitMaterializedSRF(fcinfo, 0);

	bounds.int2_lo = NumericGetDatum(int64_to_numeric(-16384));
	bounds.int2_hi = NumericGetDatum(int64_to_numeric(16383));
	bounds.int4_lo = NumericGetDatum(int64_to_numeric(-1073741824));
	bounds.int4_hi = NumericGetDatum(int64_to_numeric(1073741823));
	bounds.int8_lo = NumericGetDatum(int64_to_numeric(-INT64CONST(4611686018427387904)));
	bounds.int8_hi = NumericGetDatum(int64_to_numeric(INT64CONST(4611686018427387903)));

	memset(&hctl, 0, sizeof(hctl));
	hctl.keysize = sizeof(Oid);
	hctl.entrysize = sizeof(NamespaceEntry);
	hctl.hcxt = CurrentMemoryContext;
	nsp_cache = hash_create("storagelab namespaces", 64, &hctl,
							HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	tablectx = AllocSetContextCreate(CurrentMemoryContext,
									 "column_walk table",
									 ALLOCSET_DEFAULT_SIZES);
	cols = palloc(sizeof(ColumnInfo) * maxcols);

	/*
	 * pg_attribute: user columns only (attnum > 0), which the index filters,
	 * so that the system columns of every relation cost no heap fetch.
	 */
	ScanKeyInit(&attnum_key, Anum_pg_attribute_attnum, BTGreaterStrategyNumber,
				F_INT2GT, Int16GetDatum(0));
	walk_begin(&classes, RelationRelationId, ClassOidIndexId, 0, NULL);
	walk_begin(&attrs, AttributeRelationId, AttributeRelidNumIndexId, 1, &attnum_key);
	walk_begin(&stats, StatisticRelationId, StatisticRelidAttnumInhIndexId, 0, NULL);
	have_profiles = profile_walk_begin(&profiles, own_nspid);
	if (have_profiles)
		prof_desc = RelationGetDescr(profiles.heap);
	class_desc = RelationGetDescr(classes.heap);
	stat_desc = RelationGetDescr(stats.heap);

	for (; classes.tuple != NULL; walk_next(&classes))
	{
		Form_pg_class cls = (Form_pg_class) GETSTRUCT(classes.tuple);
		TableInfo	t;
		MemoryContext old;
		bool		isnull;

		CHECK_FOR_INTERRUPTS();
		if (cls->relkind != RELKIND_RELATION ||
			!namespace_listed(nsp_cache, cls->relnamespace, own_nspid) ||
			!table_readable(cls->oid, roleid))
			continue;

		old = MemoryContextSwitchTo(tablectx);
		memset(&t, 0, sizeof(t));
		t.relid = cls->oid;
		t.reltuples = cls->reltuples;
		t.relpages = cls->relpages;
		t.cols = cols;
		t.rls_active = cls->relrowsecurity &&
			check_enable_rls(t.relid, InvalidOid, true) == RLS_ENABLED;

		/* fillfactor, when the table sets one */
		{
			Datum		opts = heap_getattr(classes.tuple, Anum_pg_class_reloptions,
											class_desc, &isnull);

			if (!isnull)
			{
				StdRdOptions *rdopts = (StdRdOptions *)
					heap_reloptions(RELKIND_RELATION, opts, false);

				if (rdopts != NULL)
				{
					t.fillfactor = rdopts->fillfactor;
					t.fillfactor_set = true;
				}
			}
		}

		/* the other walks catch up */
		while (attrs.tuple != NULL &&
			   ((Form_pg_attribute) GETSTRUCT(attrs.tuple))->attrelid < t.relid)
			walk_next(&attrs);
		while (stats.tuple != NULL &&
			   ((Form_pg_statistic) GETSTRUCT(stats.tuple))->starelid < t.relid)
			walk_next(&stats);
		while (have_profiles && profiles.tuple != NULL &&
			   DatumGetObjectId(heap_getattr(profiles.tuple, PROF_RELID + 1, prof_desc,
											 &isnull)) < t.relid)
			walk_next(&profiles);

		for (; attrs.tuple != NULL && t.ncols < maxcols; walk_next(&attrs))
		{
			Form_pg_attribute att = (Form_pg_attribute) GETSTRUCT(attrs.tuple);
			ColumnInfo *c = &cols[t.ncols];

			if (att->attrelid != t.relid)
				break;
			t.ncols++;
			memset(c, 0, sizeof(*c));
			c->attnum = att->attnum;
			c->attname = att->attname;
			c->dropped = att->attisdropped;
			c->typid = att->atttypid;
			c->typmod = att->atttypmod;
			c->len = att->attlen;
			c->align = att->attalign;
			c->storage = att->attstorage;
			c->notnull = att->attnotnull;
			if (c->dropped)
				c->protected_because = NULL;
			else if (att->attidentity != '\0')
				c->protected_because = "identity";
			else if (att->attgenerated != '\0')
				c->protected_because = "generated";
			else if (att->attinhcount > 0)
				c->protected_because = "inherited";

			/* the column's own statistics row, if any */
			while (stats.tuple != NULL)
			{
				Form_pg_statistic sf = (Form_pg_statistic) GETSTRUCT(stats.tuple);

				if (sf->starelid != t.relid || sf->staattnum > c->attnum)
					break;
				if (sf->staattnum == c->attnum && !sf->stainherit)
				{
					if (!c->dropped && !t.rls_active)
						c->has_stats = true;
					break;
				}
				walk_next(&stats);
			}

			/* its profile, if any and current */
			while (have_profiles && profiles.tuple != NULL)
			{
				Datum		pv[PROF_NATTS];
				bool		pn[PROF_NATTS];

				heap_deform_tuple(profiles.tuple, prof_desc, pv, pn);
				if (DatumGetObjectId(pv[PROF_RELID]) != t.relid ||
					DatumGetInt16(pv[PROF_ATTNUM]) > c->attnum)
					break;
				if (DatumGetInt16(pv[PROF_ATTNUM]) == c->attnum && !c->dropped &&
					!t.rls_active &&
					strcmp(NameStr(*DatumGetName(pv[PROF_ATTNAME])), NameStr(c->attname)) == 0 &&
					DatumGetObjectId(pv[PROF_ATTTYPID]) == c->typid &&
					DatumGetInt32(pv[PROF_ATTTYPMOD]) == c->typmod)
				{
					for (int k = 0; k < PROF_NATTS; k++)
					{
						Form_pg_attribute pa = TupleDescAttr(prof_desc, k);

						c->prof_null[k] = pn[k];
						c->prof[k] = pn[k] ? (Datum) 0 :
							datumCopy(pv[k], pa->attbyval, pa->attlen);
					}
					c->source = FS_EXACT;
				}
				walk_next(&profiles);
			}

			if (c->has_stats)
			{
				Form_pg_statistic sf = (Form_pg_statistic) GETSTRUCT(stats.tuple);
				bool		rules = rules_apply_to(c->typid);

				c->stat_null_frac = sf->stanullfrac;
				c->stawidth = sf->stawidth;

				/*
				 * The sample's values: for variable-width columns (widths)
				 * and the types the rules look at (bounds, kinds); not when
				 * a current profile replaces them.
				 */
				if (c->source != FS_EXACT && (c->len == -1 || rules))
				{
					ArrayType  *mcv = statistic_array(stats.tuple, stat_desc,
													  STATISTIC_KIND_MCV, false);
					ArrayType  *freqs = mcv == NULL ? NULL :
						statistic_array(stats.tuple, stat_desc, STATISTIC_KIND_MCV, true);
					ArrayType  *hist = statistic_array(stats.tuple, stat_desc,
													   STATISTIC_KIND_HISTOGRAM, false);

					storagelab_summarize_sample(c->typid, sf->stanullfrac,
												mcv, freqs, hist, rules, &c->sample);
				}
			}
			resolve_facts(c);
		}

		switch (output)
		{
			case WO_COLUMNS:
				emit_columns(rsinfo, &t);
				break;
			case WO_TABLES:
				emit_table(rsinfo, &t);
				break;
			case WO_CANDIDATES:
				emit_candidates(rsinfo, &t, &bounds, skip);
				break;
		}
		MemoryContextSwitchTo(old);
		MemoryContextReset(tablectx);
	}

	if (have_profiles)
		walk_end(&profiles);
	walk_end(&stats);
	walk_end(&attrs);
	walk_end(&classes);
}

/*
 * storagelab_column_statistics
 *		column_statistics() returns setof record: one row per column (dropped
 *		ones included) of every listed table, in (relid, attnum) order, with
 *		the columns of the column_facts view but protected_because only for
 *		identity, generated and inherited columns (the view adds keys and
 *		sequences from pg_constraint and pg_depend).
 */
Datum
storagelab_column_statistics(PG_FUNCTION_ARGS)
{
	column_walk(fcinfo, WO_COLUMNS, NULL);
	return (Datum) 0;
}

/*
 * storagelab_table_layouts
 *		table_layouts() returns setof (relid oid, tuples float8,
 *		missing_facts bool, all_exact bool, current_order name[],
 *		suggested_order name[], row_bytes float8, padding_bytes float8,
 *		suggested_row_bytes float8, pages_now int8, pages_after int8): one
 *		row per listed table with a live column; the sizes are NULL when a
 *		column has no facts or the row count is unknown.
 */
Datum
storagelab_table_layouts(PG_FUNCTION_ARGS)
{
	column_walk(fcinfo, WO_TABLES, NULL);
	return (Datum) 0;
}

/*
 * storagelab_column_candidates
 *		column_candidates(skip_relids oid[], skip_attnums int2[]) returns
 *		setof (relid oid, attnum int2, attname name, atttypid oid,
 *		atttypmod int4, attnotnull bool, source text, null_frac float8,
 *		profiled_at timestamptz, tuples float8, rule int4, lo numeric,
 *		hi numeric, suggested_type text, reason text,
 *		saved_bytes_per_row float8, saved_bytes_per_row_reordered float8,
 *		saved_pages int8): see emit_candidates().  The columns named by the
 *		two parallel arrays (the keys column_waste never narrows) are left
 *		out; NULL arrays leave none out.
 */
Datum
storagelab_column_candidates(PG_FUNCTION_ARGS)
{
	HTAB	   *skip = NULL;

	if (!PG_ARGISNULL(0) && !PG_ARGISNULL(1))
	{
		ArrayType  *relids = PG_GETARG_ARRAYTYPE_P(0);
		ArrayType  *attnums = PG_GETARG_ARRAYTYPE_P(1);
		Datum	   *rv;
		bool	   *rn;
		int			nr;
		Datum	   *av;
		bool	   *an;
		int			na;
		HASHCTL		hctl;

		deconstruct_array(relids, OIDOID, sizeof(Oid), true, TYPALIGN_INT,
						  &rv, &rn, &nr);
		deconstruct_array(attnums, INT2OID, sizeof(int16), true, TYPALIGN_SHORT,
						  &av, &an, &na);
		if (nr != na)
			ereport(ERROR,
					(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
					 errmsg("skip_relids has %d elements and skip_attnums %d", nr, na),
					 errdetail("The arrays name columns as (relid, attnum) pairs, one element each.")));
		memset(&hctl, 0, sizeof(hctl));
		hctl.keysize = sizeof(uint64);
		hctl.entrysize = sizeof(uint64);
		hctl.hcxt = CurrentMemoryContext;
		skip = hash_create("storagelab skipped columns", Max(nr, 16), &hctl,
						   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		for (int i = 0; i < nr; i++)
		{
			uint64		key;

			if (rn[i] || an[i])
				continue;
			key = ((uint64) DatumGetObjectId(rv[i]) << 16) |
				(uint16) DatumGetInt16(av[i]);
			(void) hash_search(skip, &key, HASH_ENTER, NULL);
		}
	}
	column_walk(fcinfo, WO_CANDIDATES, skip);
	return (Datum) 0;
}
