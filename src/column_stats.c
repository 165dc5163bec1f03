/*-------------------------------------------------------------------------
 *
 * column_stats.c
 *	  One pass over the catalogs behind storagelab_internal.column_facts,
 *	  alignment_padding and column_waste: every column of every ordinary
 *	  table the caller may read, with its layout facts, its pg_statistic row
 *	  and its current column_profiles row.
 *
 * column_walk() backs the SQL functions column_statistics(),
 * table_layouts(), column_candidates() and table_rewrite_plans().  It walks
 * pg_class, pg_attribute, pg_statistic and storagelab_internal.column_profiles
 * once each, in
 * the order of their (relation OID, ...) indexes, and merges the walks one
 * table at a time, so its cost is linear in the number of columns and it
 * fills no catalog cache; column_rules.c turns each table into the rows the
 * function returns.  It reads the statistics arrays itself (typed values,
 * never their text form), and decodes most common values and histogram
 * bounds only where they matter: bounds and text kinds for the types the
 * rules of column_waste apply to, widths for variable-width types; of a
 * fixed-width column the layout needs stanullfrac only.
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

#include "column_walk.h"
#include "compat.h"

PG_FUNCTION_INFO_V1(storagelab_column_statistics);
PG_FUNCTION_INFO_V1(storagelab_table_layouts);
PG_FUNCTION_INFO_V1(storagelab_column_candidates);
PG_FUNCTION_INFO_V1(storagelab_table_rewrite_plans);

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
 *		their tables disappear with the session), nor storagelab's own two.
 */
static bool
namespace_listed(HTAB *cache, Oid nspid)
{
	NamespaceEntry *entry;
	bool		found;

	entry = hash_search(cache, &nspid, HASH_ENTER, &found);
	if (!found)
	{
		char	   *name = get_namespace_name(nspid);

		entry->listed = name != NULL &&
			nspid != PG_CATALOG_NAMESPACE &&
			strcmp(name, "storagelab") != 0 &&
			strcmp(name, "storagelab_internal") != 0 &&
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

/* What a call emits. */
typedef enum WalkOutput
{
	WO_COLUMNS,					/* column_statistics(): one row per column */
	WO_TABLES,					/* table_layouts(): one row per table */
	WO_CANDIDATES,				/* column_candidates(): one row per column a
								 * type rule may apply to */
	WO_PLANS					/* table_rewrite_plans(): one row per table */
} WalkOutput;

/*
 * The result columns of each output, as part 50 declares the four SQL
 * functions (checked by column_walk(): see result_check.c).
 */
static const Oid columns_types[] = {
	OIDOID, FLOAT8OID, INT4OID, INT4OID, INT2OID, NAMEOID, BOOLOID, OIDOID,
	INT4OID, INT2OID, CHAROID, CHAROID, BOOLOID, INT4OID, TEXTOID, TEXTOID,
	TIMESTAMPTZOID, INT8OID, FLOAT8OID, FLOAT8OID, NUMERICOID, NUMERICOID,
	BOOLOID, TEXTOID, FLOAT8OID, NUMERICOID, NUMERICOID, BOOLOID, TEXTOID,
	FLOAT8OID, FLOAT8OID
};
static const Oid tables_types[] = {
	OIDOID, FLOAT8OID, BOOLOID, BOOLOID, NAMEARRAYOID, NAMEARRAYOID,
	FLOAT8OID, FLOAT8OID, FLOAT8OID, INT8OID, INT8OID
};
static const Oid candidates_types[] = {
	OIDOID, INT2OID, NAMEOID, OIDOID, INT4OID, BOOLOID, TEXTOID, FLOAT8OID,
	TIMESTAMPTZOID, FLOAT8OID, INT4OID, NUMERICOID, NUMERICOID, TEXTOID,
	TEXTOID, FLOAT8OID, FLOAT8OID, INT8OID, TEXTOID
};
static const Oid plans_types[] = {
	OIDOID, FLOAT8OID, BOOLOID, NAMEARRAYOID, NAMEARRAYOID, TEXTOID, INT4OID,
	FLOAT8OID, FLOAT8OID, INT8OID, INT8OID
};

/* The arguments of column_candidates() and table_rewrite_plans(). */
static const Oid rules_arg_types[] = {
	OIDARRAYOID, INT2ARRAYOID, FLOAT8OID, FLOAT8OID, FLOAT8OID
};

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
	c->order_key = storagelab_order_key(c->len, c->align, c->notnull, c->attnum);
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
 * profile_walk_begin
 *		Start the walk over storagelab_internal.column_profiles in primary key order
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
		elog(ERROR, "storagelab_internal.column_profiles has %d columns, expected %d",
			 RelationGetDescr(w->heap)->natts, PROF_NATTS);
	w->index = index_open(indexid, AccessShareLock);
	w->scan = systable_beginscan_ordered(w->heap, w->index, GetActiveSnapshot(),
										 0, NULL);
	w->tuple = systable_getnext_ordered(w->scan, ForwardScanDirection);
	return true;
}

/* The four catalog walks of column_walk(), kept in step by relation OID. */
typedef struct ColumnWalks
{
	CatalogWalk classes;		/* pg_class, by OID */
	CatalogWalk attrs;			/* pg_attribute, by (attrelid, attnum) */
	CatalogWalk stats;			/* pg_statistic, by (starelid, staattnum) */
	CatalogWalk profiles;		/* column_profiles, by (relid, attnum) */
	bool		have_profiles;	/* column_profiles exists */
	TupleDesc	class_desc;
	TupleDesc	stat_desc;
	TupleDesc	prof_desc;		/* NULL without column_profiles */
} ColumnWalks;

/*
 * walks_begin
 *		Start the four walks: pg_class, pg_attribute (user columns only,
 *		attnum > 0, which the index filters, so that the system columns of
 *		every relation cost no heap fetch), pg_statistic and, when it exists,
 *		storagelab_internal.column_profiles.
 */
static void
walks_begin(ColumnWalks *w)
{
	ScanKeyData attnum_key;

	memset(w, 0, sizeof(*w));
	ScanKeyInit(&attnum_key, Anum_pg_attribute_attnum, BTGreaterStrategyNumber,
				F_INT2GT, Int16GetDatum(0));
	walk_begin(&w->classes, RelationRelationId, ClassOidIndexId, 0, NULL);
	walk_begin(&w->attrs, AttributeRelationId, AttributeRelidNumIndexId, 1, &attnum_key);
	walk_begin(&w->stats, StatisticRelationId, StatisticRelidAttnumInhIndexId, 0, NULL);
	w->have_profiles = profile_walk_begin(&w->profiles,
										  get_namespace_oid("storagelab_internal", true));
	if (w->have_profiles)
		w->prof_desc = RelationGetDescr(w->profiles.heap);
	w->class_desc = RelationGetDescr(w->classes.heap);
	w->stat_desc = RelationGetDescr(w->stats.heap);
}

/*
 * walks_end
 *		Finish the four walks and release their locks.
 */
static void
walks_end(ColumnWalks *w)
{
	if (w->have_profiles)
		walk_end(&w->profiles);
	walk_end(&w->stats);
	walk_end(&w->attrs);
	walk_end(&w->classes);
}

/*
 * walks_catch_up
 *		Move the pg_attribute, pg_statistic and column_profiles walks to the
 *		first row of relid or past it.
 */
static void
walks_catch_up(ColumnWalks *w, Oid relid)
{
	bool		isnull;

	while (w->attrs.tuple != NULL &&
		   ((Form_pg_attribute) GETSTRUCT(w->attrs.tuple))->attrelid < relid)
		walk_next(&w->attrs);
	while (w->stats.tuple != NULL &&
		   ((Form_pg_statistic) GETSTRUCT(w->stats.tuple))->starelid < relid)
		walk_next(&w->stats);
	while (w->have_profiles && w->profiles.tuple != NULL &&
		   DatumGetObjectId(heap_getattr(w->profiles.tuple, PROF_RELID + 1, w->prof_desc,
										 &isnull)) < relid)
		walk_next(&w->profiles);
}

/*
 * table_begin
 *		A table's facts from its pg_class row: size, row-level security, and
 *		fillfactor when the table sets one; no columns yet.
 */
static void
table_begin(TableInfo *t, HeapTuple classtup, TupleDesc class_desc, ColumnInfo *cols)
{
	Form_pg_class cls = (Form_pg_class) GETSTRUCT(classtup);
	bool		isnull;
	Datum		opts;

	memset(t, 0, sizeof(*t));
	t->relid = cls->oid;
	t->reltuples = cls->reltuples;
	t->relpages = cls->relpages;
	t->cols = cols;
	t->rls_active = cls->relrowsecurity &&
		check_enable_rls(t->relid, InvalidOid, true) == RLS_ENABLED;

	opts = heap_getattr(classtup, Anum_pg_class_reloptions, class_desc, &isnull);
	if (!isnull)
	{
		StdRdOptions *rdopts = (StdRdOptions *)
			heap_reloptions(RELKIND_RELATION, opts, false);

		if (rdopts != NULL)
		{
			t->fillfactor = rdopts->fillfactor;
			t->fillfactor_set = true;
		}
	}
}

/*
 * column_begin
 *		A column's layout facts from its pg_attribute row, and why a type
 *		change may not touch it (identity, generated, inherited).
 */
static void
column_begin(ColumnInfo *c, Form_pg_attribute att)
{
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
}

/*
 * column_find_statistics
 *		Move the pg_statistic walk to the column's own (not inherited)
 *		statistics row, and note that it has one; the walk stays on that row.
 *		A dropped column, or a table under active row-level security, gets
 *		none (pg_stats's condition).
 */
static void
column_find_statistics(CatalogWalk *stats, const TableInfo *t, ColumnInfo *c)
{
	while (stats->tuple != NULL)
	{
		Form_pg_statistic sf = (Form_pg_statistic) GETSTRUCT(stats->tuple);

		if (sf->starelid != t->relid || sf->staattnum > c->attnum)
			break;
		if (sf->staattnum == c->attnum && !sf->stainherit)
		{
			if (!c->dropped && !t->rls_active)
				c->has_stats = true;
			break;
		}
		walk_next(stats);
	}
}

/*
 * column_find_profile
 *		Move the column_profiles walk past the column's rows, copying its
 *		profile when current (same name, type and typmod) into the column.
 */
static void
column_find_profile(CatalogWalk *profiles, TupleDesc prof_desc, const TableInfo *t,
					ColumnInfo *c)
{
	while (profiles->tuple != NULL)
	{
		Datum		pv[PROF_NATTS];
		bool		pn[PROF_NATTS];

		heap_deform_tuple(profiles->tuple, prof_desc, pv, pn);
		if (DatumGetObjectId(pv[PROF_RELID]) != t->relid ||
			DatumGetInt16(pv[PROF_ATTNUM]) > c->attnum)
			break;
		if (DatumGetInt16(pv[PROF_ATTNUM]) == c->attnum && !c->dropped &&
			!t->rls_active &&
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
		walk_next(profiles);
	}
}

/*
 * column_read_statistics
 *		The column's figures from its pg_statistic row: null fraction, width,
 *		distinct values, and the sample's values for variable-width columns
 *		(widths) and the types the rules look at (bounds, kinds); not the
 *		sample when a current profile replaces it.
 */
static void
column_read_statistics(ColumnInfo *c, HeapTuple stattup, TupleDesc stat_desc)
{
	Form_pg_statistic sf = (Form_pg_statistic) GETSTRUCT(stattup);
	bool		rules = storagelab_rules_apply_to(c->typid);

	c->stat_null_frac = sf->stanullfrac;
	c->stawidth = sf->stawidth;
	c->stadistinct = sf->stadistinct;
	if (c->source != FS_EXACT && (c->len == -1 || rules))
	{
		ArrayType  *mcv = statistic_array(stattup, stat_desc, STATISTIC_KIND_MCV, false);
		ArrayType  *freqs = mcv == NULL ? NULL :
			statistic_array(stattup, stat_desc, STATISTIC_KIND_MCV, true);
		ArrayType  *hist = statistic_array(stattup, stat_desc,
										   STATISTIC_KIND_HISTOGRAM, false);

		storagelab_summarize_sample(c->typid, sf->stanullfrac,
									mcv, freqs, hist, rules, &c->sample);
	}
}

/*
 * table_columns
 *		The columns of the table the pg_class walk stands on (at most maxcols),
 *		each with its statistics and current profile, its facts resolved;
 *		the other walks move past the table's rows.
 */
static void
table_columns(ColumnWalks *w, TableInfo *t, int maxcols)
{
	walks_catch_up(w, t->relid);
	for (; w->attrs.tuple != NULL && t->ncols < maxcols; walk_next(&w->attrs))
	{
		Form_pg_attribute att = (Form_pg_attribute) GETSTRUCT(w->attrs.tuple);
		ColumnInfo *c = &t->cols[t->ncols];

		if (att->attrelid != t->relid)
			break;
		t->ncols++;
		column_begin(c, att);
		column_find_statistics(&w->stats, t, c);
		if (w->have_profiles)
			column_find_profile(&w->profiles, w->prof_desc, t, c);
		if (c->has_stats)
			column_read_statistics(c, w->stats.tuple, w->stat_desc);
		resolve_facts(c);
	}
}

/*
 * walk_check_result
 *		Check the caller's result columns against the output's (as part 50
 *		declares the four SQL functions).
 */
static void
walk_check_result(ReturnSetInfo *rsinfo, WalkOutput output)
{
	switch (output)
	{
		case WO_COLUMNS:
			SL_CHECK_RESULT(rsinfo->setDesc, columns_types, "column_statistics");
			break;
		case WO_TABLES:
			SL_CHECK_RESULT(rsinfo->setDesc, tables_types, "table_layouts");
			break;
		case WO_CANDIDATES:
			SL_CHECK_RESULT(rsinfo->setDesc, candidates_types, "column_candidates");
			break;
		case WO_PLANS:
			SL_CHECK_RESULT(rsinfo->setDesc, plans_types, "table_rewrite_plans");
			break;
	}
}

/*
 * walk_emit
 *		The rows of one table that the output asks for (column_rules.c).
 */
static void
walk_emit(ReturnSetInfo *rsinfo, WalkOutput output, const TableInfo *t,
		  const RuleBounds *bounds, HTAB *skip, const EvidenceRules *evidence)
{
	switch (output)
	{
		case WO_COLUMNS:
			storagelab_emit_columns(rsinfo, t);
			break;
		case WO_TABLES:
			storagelab_emit_table(rsinfo, t);
			break;
		case WO_CANDIDATES:
			storagelab_emit_candidates(rsinfo, t, bounds, skip, evidence);
			break;
		case WO_PLANS:
			storagelab_emit_plan(rsinfo, t, bounds, skip, evidence);
			break;
	}
}

/*
 * column_walk
 *		The walk behind the four SQL functions: every ordinary table in a
 *		listed schema that the caller may read (see the file header), its
 *		columns with their statistics and current profiles, emitted as the
 *		output asks.  Takes AccessShareLock on pg_class, pg_attribute,
 *		pg_statistic, storagelab_internal.column_profiles and their indexes only;
 *		never locks, opens or reads a user table.  Memory: one table at a
 *		time, in a context reset after each.
 */
static void
column_walk(FunctionCallInfo fcinfo, WalkOutput output, HTAB *skip,
			const EvidenceRules *evidence)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			roleid = GetUserId();
	ColumnWalks w;
	HASHCTL		hctl;
	HTAB	   *nsp_cache;
	MemoryContext tablectx;
	RuleBounds	bounds;
	ColumnInfo *cols;

	InitMaterializedSRF(fcinfo, 0);
	walk_check_result(rsinfo, output);
	storagelab_rule_bounds(&bounds);

	memset(&hctl, 0, sizeof(hctl));
	hctl.keysize = sizeof(Oid);
	hctl.entrysize = sizeof(NamespaceEntry);
	hctl.hcxt = CurrentMemoryContext;
	nsp_cache = hash_create("storagelab namespaces", 64, &hctl,
							HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	tablectx = AllocSetContextCreate(CurrentMemoryContext,
									 "column_walk table",
									 ALLOCSET_DEFAULT_SIZES);
	cols = palloc(sizeof(ColumnInfo) * MaxHeapAttributeNumber);

	walks_begin(&w);
	for (; w.classes.tuple != NULL; walk_next(&w.classes))
	{
		Form_pg_class cls = (Form_pg_class) GETSTRUCT(w.classes.tuple);
		TableInfo	t;
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		if (cls->relkind != RELKIND_RELATION ||
			!namespace_listed(nsp_cache, cls->relnamespace) ||
			!table_readable(cls->oid, roleid))
			continue;

		old = MemoryContextSwitchTo(tablectx);
		table_begin(&t, w.classes.tuple, w.class_desc, cols);
		table_columns(&w, &t, MaxHeapAttributeNumber);
		walk_emit(rsinfo, output, &t, &bounds, skip, evidence);
		MemoryContextSwitchTo(old);
		MemoryContextReset(tablectx);
	}
	walks_end(&w);
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
	column_walk(fcinfo, WO_COLUMNS, NULL, NULL);
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
	column_walk(fcinfo, WO_TABLES, NULL, NULL);
	return (Datum) 0;
}

/*
 * skip_columns
 *		The (relid, attnum) pairs named by two parallel array arguments (the
 *		keys column_waste never narrows) as a hash set; NULL when either
 *		array is NULL.
 */
static HTAB *
skip_columns(FunctionCallInfo fcinfo, int relids_arg, int attnums_arg)
{
	HTAB	   *skip;
	ArrayType  *relids;
	ArrayType  *attnums;
	Datum	   *rv;
	bool	   *rn;
	int			nr;
	Datum	   *av;
	bool	   *an;
	int			na;
	HASHCTL		hctl;

	if (PG_ARGISNULL(relids_arg) || PG_ARGISNULL(attnums_arg))
		return NULL;
	relids = PG_GETARG_ARRAYTYPE_P(relids_arg);
	attnums = PG_GETARG_ARRAYTYPE_P(attnums_arg);
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
	return skip;
}

/*
 * evidence_rules
 *		The evidence thresholds from three float8 arguments (NULL: 0, no
 *		threshold); negative values are refused.
 */
static void
evidence_rules(FunctionCallInfo fcinfo, int first_arg, EvidenceRules *e)
{
	double		v[3];

	for (int k = 0; k < 3; k++)
	{
		v[k] = PG_ARGISNULL(first_arg + k) ? 0.0 : PG_GETARG_FLOAT8(first_arg + k);
		if (isnan(v[k]) || v[k] < 0.0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("evidence thresholds must be non-negative"),
					 errhint("Check the settings column_waste.min_rows, column_waste.min_distinct and column_waste.dense_below.")));
	}
	e->min_rows = v[0];
	e->min_distinct = v[1];
	e->dense_below = v[2];
}

/*
 * storagelab_column_candidates
 *		column_candidates(skip_relids oid[], skip_attnums int2[],
 *		min_rows float8, min_distinct float8, dense_below float8) returns
 *		setof (relid oid, attnum int2, attname name, atttypid oid,
 *		atttypmod int4, attnotnull bool, source text, null_frac float8,
 *		profiled_at timestamptz, tuples float8, rule int4, lo numeric,
 *		hi numeric, suggested_type text, reason text,
 *		saved_bytes_per_row float8, saved_bytes_per_row_reordered float8,
 *		saved_pages int8, thin_evidence text): see emit_candidates().  The
 *		columns named by the two parallel arrays (the keys column_waste never
 *		narrows) are left out; NULL arrays leave none out.
 */
Datum
storagelab_column_candidates(PG_FUNCTION_ARGS)
{
	HTAB	   *skip;
	EvidenceRules e;

	SL_CHECK_ARGS(fcinfo, rules_arg_types, "column_candidates");
	skip = skip_columns(fcinfo, 0, 1);
	evidence_rules(fcinfo, 2, &e);
	column_walk(fcinfo, WO_CANDIDATES, skip, &e);
	return (Datum) 0;
}

/*
 * storagelab_table_rewrite_plans
 *		table_rewrite_plans(skip_relids oid[], skip_attnums int2[],
 *		min_rows float8, min_distinct float8, dense_below float8): one row
 *		per table with the type changes judged together and the column order
 *		(see storagelab_emit_plan()); arguments as column_candidates().
 */
Datum
storagelab_table_rewrite_plans(PG_FUNCTION_ARGS)
{
	HTAB	   *skip;
	EvidenceRules e;

	SL_CHECK_ARGS(fcinfo, rules_arg_types, "table_rewrite_plans");
	skip = skip_columns(fcinfo, 0, 1);
	evidence_rules(fcinfo, 2, &e);
	column_walk(fcinfo, WO_PLANS, skip, &e);
	return (Datum) 0;
}
