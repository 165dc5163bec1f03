/*-------------------------------------------------------------------------
 *
 * column_rules.c
 *	  The four outputs of the catalog walk in column_stats.c, built one
 *	  table at a time: the per-column facts (column_statistics(), behind
 *	  storagelab_internal.column_facts), the table's layouts now and in the suggested
 *	  column order (table_layouts(), behind storagelab.alignment_padding),
 *	  the column_waste type rules with the bytes each change saves and the
 *	  evidence they rest on (column_candidates(), behind
 *	  storagelab.column_waste), and the changes judged together per table
 *	  (table_rewrite_plans(), behind storagelab.table_rewrite_plan).
 *
 * Pure computation on what the walk collected: the layout model is
 * storagelab_tuple_layout() (column_layout.c).  Nothing here reads a
 * catalog or a table.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/json.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/tuplestore.h"

#include "column_walk.h"

/*
 * storagelab_rules_apply_to
 *		Whether column_waste has a rule for the type (so bounds, integrality
 *		and text kinds are worth decoding from the sample).
 */
bool
storagelab_rules_apply_to(Oid typid)
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

/*
 * storagelab_order_key
 *		Sort key of the suggested column order: fixed width by alignment
 *		descending, then variable width; NOT NULL first within each; then the
 *		column's position.
 */
int32
storagelab_order_key(int16 len, char align, bool notnull, int16 attnum)
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
 * storagelab_rule_bounds
 *		The rules' bounds as numerics (half of each narrower type's range),
 *		in the current memory context.
 */
void
storagelab_rule_bounds(RuleBounds *b)
{
	b->int2_lo = NumericGetDatum(int64_to_numeric(-16384));
	b->int2_hi = NumericGetDatum(int64_to_numeric(16383));
	b->int4_lo = NumericGetDatum(int64_to_numeric(-1073741824));
	b->int4_hi = NumericGetDatum(int64_to_numeric(1073741823));
	b->int8_lo = NumericGetDatum(int64_to_numeric(-INT64CONST(4611686018427387904)));
	b->int8_hi = NumericGetDatum(int64_to_numeric(INT64CONST(4611686018427387903)));
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
 * rule_narrows_range
 *		Whether a rule narrows integers to a range (1-4, 6-8): the data's
 *		bounds are what it rests on.
 */
static bool
rule_narrows_range(int rule)
{
	return (rule >= 1 && rule <= 4) || (rule >= 6 && rule <= 8);
}

/*
 * distinct_values
 *		How many distinct non-NULL values the column has by pg_statistic's
 *		stadistinct (negative: a fraction of the rows), or -1 when unknown.
 */
static double
distinct_values(const ColumnInfo *c, double rows)
{
	if (!c->has_stats || c->stadistinct == 0.0)
		return -1.0;
	if (c->stadistinct > 0.0)
		return c->stadistinct;
	return -c->stadistinct * rows;
}

/*
 * named_as_identifier
 *		Whether a column name reads as an identifier: id, or ending in _id
 *		(any case), or camelCase ending in Id (userId).
 */
static bool
named_as_identifier(const char *name)
{
	size_t		len = strlen(name);

	if (len < 2)
		return false;
	if (pg_strcasecmp(name + len - 2, "id") != 0)
		return false;
	return len == 2 || name[len - 3] == '_' ||
		(name[len - 2] == 'I' && name[len - 1] == 'd' && name[len - 3] >= 'a' &&
		 name[len - 3] <= 'z');
}

/*
 * thin_evidence
 *		Why the data is too thin to narrow the column by the rule, in words
 *		without numbers (they are settings), or NULL when it is enough:
 *		- fewer rows than min_rows (exact or not, a handful of rows says
 *		  nothing about the values the application will write), or fewer
 *		  non-NULL values than min_rows (five values in a column of 5,000
 *		  mostly NULL rows are a handful too);
 *		- integer ranges (rules 1-4, 6-8) of a column named as an identifier
 *		  (id, *_id, camelCase *Id): ids grow with the rows they count or
 *		  refer to, whether or not a sequence or a foreign key says so (an
 *		  events.user_id without a foreign key, an id the application
 *		  assigns), so today's range shows nothing of tomorrow's;
 *		- integral numerics (rules 3, 4) from statistics: ANALYZE's sample
 *		  holding only integers does not show that the table does, and the
 *		  cast to an integer type rounds a fraction without an error;
 *		- for the integer ranges: all values equal (a constant shows no
 *		  range: pgbench_accounts.abalance after loading, a bitmask never
 *		  set), an unknown or too small number of distinct values, or
 *		  fewer than dense_below distinct values with gaps between them
 *		  (codes or bit flags: the domain is the application's, not the
 *		  data's), whereas an enumeration such as 0, 1, 2 fills its range.
 */
static const char *
thin_evidence(const ColumnInfo *c, int rule, double tuples, bool have_bounds,
			  Datum lo, Datum hi, const EvidenceRules *e)
{
	double		rows = c->source == FS_EXACT ?
		(double) DatumGetInt64(c->prof[PROF_ROW_COUNT]) : tuples;
	double		distinct;
	double		span;

	if (rows < e->min_rows)
		return "too few rows to judge the values (setting column_waste.min_rows)";
	if (!c->null_frac_null && rows * (1.0 - c->null_frac) < e->min_rows)
		return "too few non-NULL values to judge them (setting column_waste.min_rows)";
	if (rule_narrows_range(rule) && named_as_identifier(NameStr(c->attname)))
		return "named as an identifier: ids grow with the rows they count; "
			"narrow it with column_types if its source stays small";
	if ((rule == 3 || rule == 4) && c->source != FS_EXACT)
		return "integers only in ANALYZE's sample: a cast rounds any fraction it missed; "
			"run storagelab.column_profile()";
	if (!rule_narrows_range(rule))
		return NULL;
	if (!have_bounds)
		return "no bounds seen: run storagelab.column_profile()";
	if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, lo, hi)) == 0)
		return "all values equal: the data shows no range";
	distinct = distinct_values(c, rows);
	if (distinct < 0.0)
		return "number of distinct values unknown: run ANALYZE";
	if (distinct < e->min_distinct)
		return "too few distinct values (setting column_waste.min_distinct)";
	span = DatumGetFloat8(DirectFunctionCall1(numeric_float8,
											  DirectFunctionCall2(numeric_sub, hi, lo))) + 1.0;
	if (distinct < e->dense_below && distinct < span - 0.5)
		return "few values with gaps: codes or bit flags whose domain the data does not show";
	return NULL;
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
			*reason = pstrdup("only UUIDs: read back as uuid prints them (lowercase, hyphenated)");
			break;
		case 6:
		case 7:
		case 8:
			*reason = psprintf("only integers, from %s to %s", los, his);
			break;
		case 9:
			*reason = pstrdup("only booleans: read back as true or false, however they were written");
			break;
		case 10:
			*reason = pstrdup("only dates (YYYY-MM-DD)");
			break;
		case 11:
			*reason = pstrdup("only timestamps without time zone: read back as YYYY-MM-DD HH:MM:SS");
			break;
		case 12:
			*reason = pstrdup("only timestamps with time zone: the offsets written are not kept");
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

				*reason = psprintf("blank padding: %s of %s bytes per value; "
								   "varchar compares trailing blanks, char(n) ignores them",
								   DatumGetCString(DirectFunctionCall1(numeric_out, pad)),
								   DatumGetCString(DirectFunctionCall1(numeric_out, all)));
			}
			break;
	}
}

/*
 * storagelab_emit_columns
 *		column_statistics(): one row per column of the table.
 */
void
storagelab_emit_columns(ReturnSetInfo *rsinfo, const TableInfo *t)
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
 * ordered_names
 *		The names of the table's live columns in the order of their layout
 *		keys (unique: they end in the attnum), into names.
 */
static void
ordered_names(const TableInfo *t, const LayoutColumn *lc, Datum *names)
{
	int			k = 0;
	int32	   *keys = palloc(sizeof(int32) * Max(t->ncols, 1));
	int		   *idx = palloc(sizeof(int) * Max(t->ncols, 1));

	/* insertion sort: tables have few columns, mostly in order */
	for (int i = 0; i < t->ncols; i++)
	{
		int			j;

		if (t->cols[i].dropped)
			continue;
		j = k++;
		while (j > 0 && keys[j - 1] > lc[i].key)
		{
			keys[j] = keys[j - 1];
			idx[j] = idx[j - 1];
			j--;
		}
		keys[j] = lc[i].key;
		idx[j] = i;
	}
	for (int j = 0; j < k; j++)
		names[j] = NameGetDatum(&t->cols[idx[j]].attname);
	pfree(keys);
	pfree(idx);
}

/*
 * storagelab_emit_table
 *		table_layouts(): the table's rows in their current order and in the
 *		suggested one (alignment_padding).
 */
void
storagelab_emit_table(ReturnSetInfo *rsinfo, const TableInfo *t)
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
	ordered_names(t, lc, suggested);

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
 * skipped
 *		Whether the column is one of the keys column_waste never narrows.
 */
static bool
skipped(HTAB *skip, Oid relid, int16 attnum)
{
	uint64		key = ((uint64) relid << 16) | (uint16) attnum;

	return skip != NULL && hash_search(skip, &key, HASH_FIND, NULL) != NULL;
}

/*
 * storagelab_emit_candidates
 *		column_candidates(): one row per column some type rule may apply to
 *		(int4, int8, numeric, text, varchar, char(n) with a length, not
 *		dropped, not an identity, generated or inherited column) that has a
 *		rule or has no facts; with the row sizes before and after the change,
 *		in the current and in the suggested order (column_waste), and why the
 *		evidence is too thin for the change (NULL when it is not).
 */
void
storagelab_emit_candidates(ReturnSetInfo *rsinfo, const TableInfo *t,
						   const RuleBounds *b, HTAB *skip, const EvidenceRules *e)
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
		Datum		v[19];
		bool		n[19];
		bool		have_bounds;
		Datum		lo;
		Datum		hi;
		bool		have_trimmed;
		double		trimmed;
		LayoutColumn changed_col;
		int			rule;

		if (c->dropped || c->protected_because != NULL || !storagelab_rules_apply_to(c->typid) ||
			(c->typid == BPCHAROID && c->typmod <= VARHDRSZ))
			continue;
		if (skipped(skip, t->relid, c->attnum))
			continue;
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
			changed_col.key = storagelab_order_key(changed_col.len, changed_col.align,
												   c->notnull, c->attnum);
			lc[i] = changed_col;
			storagelab_tuple_layout(lc, t->ncols, false, &changed);
			storagelab_tuple_layout(lc, t->ncols, true, &changed_reordered);
			lc[i] = saved;

			{
				const char *thin = thin_evidence(c, rule, tuples, have_bounds, lo, hi, e);

				if (thin != NULL)
				{
					v[18] = CStringGetTextDatum(thin);
					n[18] = false;
				}
			}
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
 * change_json
 *		One element of a plan's changes, as JSON: the column, its type now
 *		and in the plan, the bounds the change rests on (integer rules) and
 *		where the facts come from.
 */
static void
change_json(StringInfo buf, const ColumnInfo *c, const char *to_type,
			bool have_bounds, Datum lo, Datum hi)
{
	appendStringInfoString(buf, "{\"column_name\": ");
	escape_json(buf, NameStr(c->attname));
	appendStringInfoString(buf, ", \"from\": ");
	escape_json(buf, format_type_with_typemod(c->typid, c->typmod));
	appendStringInfoString(buf, ", \"to\": ");
	escape_json(buf, to_type);
	if (have_bounds)
		appendStringInfo(buf, ", \"min\": %s, \"max\": %s",
						 DatumGetCString(DirectFunctionCall1(numeric_out, lo)),
						 DatumGetCString(DirectFunctionCall1(numeric_out, hi)));
	appendStringInfoString(buf, ", \"evidence\": ");
	escape_json(buf, c->source == FS_EXACT ? "exact" : "statistics");
	appendStringInfoChar(buf, '}');
}

/*
 * storagelab_emit_plan
 *		table_rewrite_plans(): the table's rewrite judged as a whole.  Every
 *		column a type rule applies to on enough evidence (thin_evidence();
 *		keys in skip, identity, generated and inherited columns never) takes
 *		its narrower type, and the columns go into the suggested order
 *		(storagelab_order_key() of the new types).  Then each change the
 *		saving does not need is undone again, one at a time in column order:
 *		a change that saves no byte of a row once the others are made
 *		(alignment takes it back) is not worth a rewrite.  So two columns
 *		that save nothing alone but a MAXALIGN step together are both kept.
 *		One row when every live column has facts and the row count is known.
 */
void
storagelab_emit_plan(ReturnSetInfo *rsinfo, const TableInfo *t,
					 const RuleBounds *b, HTAB *skip, const EvidenceRules *e)
{
	Datum		v[11];
	bool		n[11];
	double		tuples = 0.0;
	int			nlive = 0;
	int			nchanged = 0;
	bool		all_exact = true;
	int			fillfactor = t->fillfactor_set ? t->fillfactor : HEAP_DEFAULT_FILLFACTOR;
	LayoutColumn *lc;
	LayoutColumn *planned;
	bool	   *changed;
	char	  **json;
	Datum	   *current;
	Datum	   *order;
	LayoutResult now;
	LayoutResult after;
	StringInfoData buf;

	if (!table_tuples(t, &tuples))
		return;
	for (int i = 0; i < t->ncols; i++)
	{
		if (t->cols[i].dropped)
			continue;
		if (t->cols[i].source == FS_NONE)
			return;
		if (t->cols[i].source != FS_EXACT)
			all_exact = false;
		nlive++;
	}
	if (nlive == 0)
		return;

	lc = layout_columns(t);
	planned = palloc(sizeof(LayoutColumn) * t->ncols);
	memcpy(planned, lc, sizeof(LayoutColumn) * t->ncols);
	changed = palloc0(sizeof(bool) * t->ncols);
	json = palloc0(sizeof(char *) * t->ncols);
	for (int i = 0; i < t->ncols; i++)
	{
		const ColumnInfo *c = &t->cols[i];
		bool		have_bounds;
		Datum		lo;
		Datum		hi;
		bool		have_trimmed;
		double		trimmed;
		LayoutColumn col;
		int			rule;
		char	   *type;
		char	   *reason;

		if (c->dropped || c->protected_because != NULL ||
			!storagelab_rules_apply_to(c->typid) ||
			(c->typid == BPCHAROID && c->typmod <= VARHDRSZ) ||
			skipped(skip, t->relid, c->attnum))
			continue;
		rule = column_rule(c, b, &have_bounds, &lo, &hi, &have_trimmed, &trimmed, &col);
		if (rule == 0 ||
			thin_evidence(c, rule, tuples, have_bounds, lo, hi, e) != NULL)
			continue;
		col.null_frac = lc[i].null_frac;
		col.key = storagelab_order_key(col.len, col.align, c->notnull, c->attnum);
		planned[i] = col;
		changed[i] = true;
		rule_words(rule, c, lo, hi, trimmed, &type, &reason);
		initStringInfo(&buf);
		change_json(&buf, c, type, have_bounds && rule_narrows_range(rule), lo, hi);
		json[i] = buf.data;
	}

	/* every change, then without each one the saving does not need */
	storagelab_tuple_layout(lc, t->ncols, false, &now);
	storagelab_tuple_layout(planned, t->ncols, true, &after);
	for (int i = 0; i < t->ncols; i++)
	{
		LayoutColumn kept = planned[i];
		LayoutResult without;

		if (!changed[i])
			continue;
		planned[i] = lc[i];
		storagelab_tuple_layout(planned, t->ncols, true, &without);
		if (without.tuple_bytes <= after.tuple_bytes + 0.005)
		{
			changed[i] = false;
			after = without;
		}
		else
		{
			planned[i] = kept;
			nchanged++;
		}
	}

	current = palloc(sizeof(Datum) * nlive);
	order = palloc(sizeof(Datum) * nlive);
	for (int i = 0, k = 0; i < t->ncols; i++)
		if (!t->cols[i].dropped)
			current[k++] = NameGetDatum(&t->cols[i].attname);
	ordered_names(t, planned, order);
	initStringInfo(&buf);
	appendStringInfoChar(&buf, '[');
	for (int i = 0, k = 0; i < t->ncols; i++)
	{
		if (!changed[i])
			continue;
		if (k++ > 0)
			appendStringInfoString(&buf, ", ");
		appendStringInfoString(&buf, json[i]);
	}
	appendStringInfoChar(&buf, ']');

	memset(n, false, sizeof(n));
	v[0] = ObjectIdGetDatum(t->relid);
	v[1] = Float8GetDatum(tuples);
	v[2] = BoolGetDatum(all_exact);
	v[3] = PointerGetDatum(construct_array(current, nlive, NAMEOID, NAMEDATALEN,
										   false, TYPALIGN_CHAR));
	v[4] = PointerGetDatum(construct_array(order, nlive, NAMEOID, NAMEDATALEN,
										   false, TYPALIGN_CHAR));
	v[5] = CStringGetTextDatum(buf.data);
	v[6] = Int32GetDatum(nchanged);
	v[7] = Float8GetDatum(now.tuple_bytes);
	v[8] = Float8GetDatum(after.tuple_bytes);
	v[9] = Int64GetDatum(storagelab_heap_page_count(tuples, now.tuple_bytes,
													fillfactor, now.size_varies));
	v[10] = Int64GetDatum(storagelab_heap_page_count(tuples, after.tuple_bytes,
													 fillfactor, after.size_varies));
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, n);
}
