/*-------------------------------------------------------------------------
 *
 * column_walk.h
 *	  What the catalog walk of column_stats.c knows about a table and its
 *	  columns, shared with the outputs built from it in column_rules.c,
 *	  and the functions of column_rules.c that the walk calls.
 *
 *-------------------------------------------------------------------------
 */
#ifndef STORAGELAB_COLUMN_WALK_H
#define STORAGELAB_COLUMN_WALK_H

#include "funcapi.h"
#include "utils/hsearch.h"

#include "storagelab.h"

/* Where a column's data facts come from. */
typedef enum FactSource
{
	FS_NONE,					/* never analyzed, nor profiled */
	FS_STATISTICS,				/* pg_statistic */
	FS_EXACT					/* storagelab_internal.column_profiles */
} FactSource;

/* storagelab_internal.column_profiles, as the install script creates it. */
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
	double		stadistinct;	/* pg_statistic.stadistinct (0 unknown) */
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
 * How much evidence a narrowing needs (settings column_waste.min_rows,
 * column_waste.min_distinct, column_waste.dense_below; see thin_evidence()).
 */
typedef struct EvidenceRules
{
	double		min_rows;
	double		min_distinct;
	double		dense_below;
} EvidenceRules;

/*
 * column_rules.c (column_stats.c calls column_rules.c, never the other way
 * round)
 */
extern bool storagelab_rules_apply_to(Oid typid);
extern int32 storagelab_order_key(int16 len, char align, bool notnull,
								  int16 attnum);
extern void storagelab_rule_bounds(RuleBounds *b);
extern void storagelab_emit_columns(ReturnSetInfo *rsinfo, const TableInfo *t);
extern void storagelab_emit_table(ReturnSetInfo *rsinfo, const TableInfo *t);
extern void storagelab_emit_candidates(ReturnSetInfo *rsinfo, const TableInfo *t,
									   const RuleBounds *b, HTAB *skip,
									   const EvidenceRules *e);
extern void storagelab_emit_plan(ReturnSetInfo *rsinfo, const TableInfo *t,
								 const RuleBounds *b, HTAB *skip,
								 const EvidenceRules *e);

#endif							/* STORAGELAB_COLUMN_WALK_H */
