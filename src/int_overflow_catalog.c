/*-------------------------------------------------------------------------
 *
 * int_overflow_catalog.c
 *	  The measurements behind the storagelab.int_overflow view, gathered in
 *	  one pass over the catalogs.
 *
 * storagelab.int_overflow_measurements() returns one row per reported
 * column: every int2/int4 column, and every integer column a sequence feeds,
 * of the tables and partitioned tables outside pg_catalog,
 * information_schema, pg_toast* and storagelab (other sessions' temporary
 * tables are skipped).  Partitions and inherited columns belong to the row of
 * the root of their tree.  For each row it finds what measures the column
 *
 *	- the sequences that feed it, from pg_depend only: a serial sequence
 *	  ('a', OWNED BY the column), an identity sequence ('i'), and any column
 *	  default (pg_attrdef) that depends on a sequence ('n');
 *	- for int2/int4 columns without a sequence, and for keys that narrower
 *	  foreign-key columns reference: the ends of a btree index leading with
 *	  the column on every leaf table, else the bounds ANALYZE recorded;
 *	- for a foreign-key column narrower than the key it references: the
 *	  referenced key's measurements, against the child's type;
 *
 * reads them with the probes of int_overflow.c (called directly, once per
 * object), and keeps the measurement closest to its limit, exact ones first.
 * The usage arithmetic is exact (128-bit integers where the compiler has
 * them).  The view adds the settings-dependent parts (risk, growth,
 * overflow_at) in SQL.
 *
 * Each catalog (pg_class, pg_inherits, pg_attribute, pg_sequence,
 * pg_attrdef, pg_depend, pg_constraint, pg_index) is read once with a
 * sequential system-table scan under the catalog snapshot, and joined in
 * hash tables: the cost is linear in the size of the catalogs plus one probe
 * per sequence, index and statistics row.  Nothing here takes a lock but the
 * probes' conditional, immediately released ones, and nothing is written.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_attrdef.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_class.h"
#include "catalog/pg_collation_d.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_depend.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_sequence.h"
#include "catalog/pg_type_d.h"
#include "common/int.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/tuplestore.h"
#include "utils/varlena.h"

#include "compat.h"
#include "int_overflow.h"

PG_FUNCTION_INFO_V1(storagelab_int_overflow_measurements);

/* Result columns of storagelab.int_overflow_measurements(). */
#define IO_NCOLUMNS 19

/*
 * Wide integers for the usage arithmetic: a sequence value that was never
 * called is START - INCREMENT, and a distance between two bigints, which
 * need more than 64 bits.  Without a 128-bit integer type the arithmetic is
 * done in long double (exact up to 2^63 on x86; to 2^53 elsewhere).
 */
#ifdef HAVE_INT128
typedef int128 io_wide;
#else
typedef long double io_wide;
#endif

/* A column of a relation: the key of the column and row hash tables. */
typedef struct IoKey
{
	Oid			relid;
	int32		attnum;			/* int32, so that the key has no padding */
} IoKey;

/* Kinds of measurement, in the order of preference among equals. */
typedef enum IoSource
{
	IO_SEQUENCE = 1,
	IO_IDENTITY = 1,			/* same priority as a sequence */
	IO_INDEX = 2,
	IO_STATISTICS = 3,
	IO_FOREIGN_KEY = 4
} IoSource;

/* A table or partitioned table whose integer columns are reported. */
typedef struct IoRel
{
	Oid			relid;			/* hash key */
	char		relkind;
	NameData   *nspname;		/* points into the IoNsp entry */
	NameData	relname;
} IoRel;

/* A sequence: pg_sequence's parameters, and its state once read. */
typedef struct IoSeq
{
	Oid			seqid;			/* hash key */
	int64		start;
	int64		increment;
	int64		max;
	int64		min;
	bool		cycle;
	bool		read;			/* state below is valid */
	const char *status;
	int64		last_value;
	bool		is_called;
} IoSeq;

struct IoRow;

/* An integer column of an IoRel. */
typedef struct IoCol
{
	IoKey		key;			/* hash key */
	IoRel	   *rel;
	Oid			atttypid;
	Oid			basetype;		/* int2, int4 or int8 */
	NameData	attname;
	bool		inherited;		/* attinhcount > 0 */
	IoKey		rowkey;			/* the row it belongs to */
	struct IoRow *row;			/* that row, when it is reported */
	Oid			indexid;		/* btree index leading with it, if any */
	bool		index_unique;
	int16		index_natts;
} IoCol;

/* A sequence feeding a row, and how (sequence or identity). */
typedef struct IoRowSeq
{
	IoSeq	   *seq;
	bool		identity;
} IoRowSeq;

/* One measurement of a row (a sequence, index ends, statistics). */
typedef struct IoMeas
{
	IoSource	source;
	bool		foreign_key;	/* borrowed from a referenced key */
	IoSeq	   *seq;			/* sequence measurements */
	bool		identity;
	bool		has_values;		/* min_value/max_value valid (value sources) */
	int64		min_value;
	int64		max_value;
	bool		exact;
	const char *status;
} IoMeas;

/* A foreign-key column pair, between rows. */
typedef struct IoFkPair
{
	struct IoRow *row;			/* the referencing column's row */
	struct IoRow *ref;			/* the referenced column's row */
	Oid			basetype;
	Oid			ref_basetype;
} IoFkPair;

/* A reported column (the own column of a table, or a tree's root column). */
typedef struct IoRow
{
	IoKey		key;			/* hash key */
	IoCol	   *col;
	int64		type_min;
	int64		type_max;
	List	   *leaves;			/* IoCol of leaf tables (relkind r) */
	List	   *seqs;			/* IoRowSeq */
	List	   *narrow_refs;	/* IoRow: wider keys this column references */
	List	   *referenced_by;	/* IoFkPair where this row is the key */
	bool		narrow_ref;		/* a narrower FK column references it */
	List	   *own;			/* IoMeas of its own */
	bool		leaf_unreadable;	/* an index probe said unreadable */
	bool		stats_unreadable;
	bool		visited;		/* scratch flag of referencing_columns() */
} IoRow;

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

/* Everything the walk collects. */
typedef struct IoState
{
	HTAB	   *nsps;			/* Oid -> IoNsp */
	HTAB	   *rels;			/* Oid -> IoRel */
	HTAB	   *btrees;			/* Oid of btree indexes */
	HTAB	   *parents;		/* Oid -> IoParents */
	HTAB	   *parentset;		/* Oid of every parent */
	HTAB	   *rootatts;		/* IoRootAtt */
	HTAB	   *types;			/* Oid -> IoType */
	HTAB	   *cols;			/* IoKey -> IoCol */
	HTAB	   *rows;			/* IoKey -> IoRow */
	HTAB	   *seqs;			/* Oid -> IoSeq */
	HTAB	   *attrdefs;		/* Oid -> IoAttrDef */
	List	   *fkpairs;		/* IoFkPair */
	MemoryContext probecxt;		/* reset after each probe */
} IoState;

typedef struct IoNsp
{
	Oid			nspid;
	bool		excluded;
	NameData	nspname;
} IoNsp;

typedef struct IoParents
{
	Oid			relid;
	List	   *parents;		/* OIDs */
} IoParents;

typedef struct IoRootAtt
{
	Oid			relid;
	NameData	attname;
	AttrNumber	attnum;
} IoRootAtt;

typedef struct IoType
{
	Oid			typid;
	Oid			basetype;		/* InvalidOid: not an integer type */
} IoType;

typedef struct IoAttrDef
{
	Oid			oid;
	Oid			adrelid;
	AttrNumber	adnum;
} IoAttrDef;

/*
 * make_hash
 *		A dynahash table in the current memory context.
 */
static HTAB *
make_hash(const char *name, Size keysize, Size entrysize, long nelem)
{
	HASHCTL		ctl;

	ctl.keysize = keysize;
	ctl.entrysize = entrysize;
	ctl.hcxt = CurrentMemoryContext;
	return hash_create(name, nelem, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

/*
 * make_key
 *		An IoKey, padding-free.
 */
static inline IoKey
make_key(Oid relid, AttrNumber attnum)
{
	IoKey		key;

	key.relid = relid;
	key.attnum = attnum;
	return key;
}

/*
 * namespace_entry
 *		The namespace nspid, with whether its relations are left out:
 *		pg_catalog, information_schema, storagelab and pg_toast*.
 */
static IoNsp *
namespace_entry(IoState *st, Oid nspid)
{
	IoNsp	   *nsp;
	bool		found;

	nsp = hash_search(st->nsps, &nspid, HASH_ENTER, &found);
	if (!found)
	{
		char	   *name = get_namespace_name(nspid);

		namestrcpy(&nsp->nspname, name ? name : "");
		nsp->excluded = name == NULL ||
			strcmp(name, "pg_catalog") == 0 ||
			strcmp(name, "information_schema") == 0 ||
			strcmp(name, "storagelab") == 0 ||
			strncmp(name, "pg_toast", 8) == 0;
	}
	return nsp;
}

/*
 * integer_basetype
 *		int2, int4 or int8 when typid is one of them or a domain over one
 *		(at any depth), else InvalidOid.  Cached.
 */
static Oid
integer_basetype(IoState *st, Oid typid)
{
	IoType	   *t;
	bool		found;

	if (typid == INT2OID || typid == INT4OID || typid == INT8OID)
		return typid;
	t = hash_search(st->types, &typid, HASH_ENTER, &found);
	if (!found)
	{
		Oid			base = getBaseType(typid);

		t->basetype = (base == INT2OID || base == INT4OID || base == INT8OID) ?
			base : InvalidOid;
	}
	return t->basetype;
}

/*
 * type_rank
 *		Width order of the integer types (type OIDs do not sort by width).
 */
static int
type_rank(Oid basetype)
{
	return basetype == INT2OID ? 1 : basetype == INT4OID ? 2 : 3;
}

/*
 * scan_pg_class
 *		Reported relations (tables and partitioned tables outside the left-out
 *		schemas, not another session's temporary table) and the set of btree
 *		indexes.
 */
static void
scan_pg_class(IoState *st)
{
	Relation	catalog = table_open(RelationRelationId, AccessShareLock);
	SysScanDesc scan = systable_beginscan(catalog, InvalidOid, false, NULL, 0, NULL);
	HeapTuple	tup;

	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_class form = (Form_pg_class) GETSTRUCT(tup);

		if (form->relkind == RELKIND_RELATION ||
			form->relkind == RELKIND_PARTITIONED_TABLE)
		{
			IoNsp	   *nsp;
			IoRel	   *rel;

			if (form->relpersistence == RELPERSISTENCE_TEMP &&
				!isTempNamespace(form->relnamespace))
				continue;
			nsp = namespace_entry(st, form->relnamespace);
			if (nsp->excluded)
				continue;
			rel = hash_search(st->rels, &form->oid, HASH_ENTER, NULL);
			rel->relkind = form->relkind;
			rel->nspname = &nsp->nspname;
			rel->relname = form->relname;
		}
		else if (form->relkind == RELKIND_INDEX && form->relam == BTREE_AM_OID)
			hash_search(st->btrees, &form->oid, HASH_ENTER, NULL);
	}
	systable_endscan(scan);
	table_close(catalog, AccessShareLock);
}

/*
 * scan_pg_inherits
 *		Every child's parents (partitions, inheritance children; index
 *		partitions too, which are never looked up).
 */
static void
scan_pg_inherits(IoState *st)
{
	Relation	catalog = table_open(InheritsRelationId, AccessShareLock);
	SysScanDesc scan = systable_beginscan(catalog, InvalidOid, false, NULL, 0, NULL);
	HeapTuple	tup;

	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_inherits form = (Form_pg_inherits) GETSTRUCT(tup);
		IoParents  *p;
		bool		found;

		p = hash_search(st->parents, &form->inhrelid, HASH_ENTER, &found);
		if (!found)
			p->parents = NIL;
		p->parents = lappend_oid(p->parents, form->inhparent);
		hash_search(st->parentset, &form->inhparent, HASH_ENTER, NULL);
	}
	systable_endscan(scan);
	table_close(catalog, AccessShareLock);
}

/*
 * is_root
 *		Whether relid has no parent (the root of a tree, when it is a
 *		parent).
 */
static bool
is_root(IoState *st, Oid relid)
{
	return hash_search(st->parents, &relid, HASH_FIND, NULL) == NULL;
}

/*
 * tree_root
 *		The root of the tree relid is a partition or child of: the closest
 *		ancestor without a parent (the lowest OID among equally close ones,
 *		which only multiple inheritance can produce), or InvalidOid when relid
 *		has no parent.  Gives up beyond 100 levels, as the SQL it replaces did.
 */
static Oid
tree_root(IoState *st, Oid relid)
{
	List	   *level;
	int			depth;

	if (is_root(st, relid))
		return InvalidOid;
	level = list_make1_oid(relid);
	for (depth = 0; depth < 100 && level != NIL; depth++)
	{
		List	   *next = NIL;
		Oid			best = InvalidOid;
		ListCell   *lc;

		foreach(lc, level)
		{
			IoParents  *p = hash_search(st->parents, &lfirst_oid(lc), HASH_FIND, NULL);
			ListCell   *pc;

			if (p == NULL)
				continue;
			foreach(pc, p->parents)
			{
				Oid			parent = lfirst_oid(pc);

				if (is_root(st, parent))
				{
					if (!OidIsValid(best) || parent < best)
						best = parent;
				}
				else
					next = list_append_unique_oid(next, parent);
			}
		}
		if (OidIsValid(best))
			return best;
		level = next;
	}
	return InvalidOid;
}

/*
 * scan_pg_attribute
 *		The integer columns of the reported relations, and the column names of
 *		every tree root (to map inherited columns onto the root's column).
 */
static void
scan_pg_attribute(IoState *st)
{
	Relation	catalog = table_open(AttributeRelationId, AccessShareLock);
	SysScanDesc scan = systable_beginscan(catalog, InvalidOid, false, NULL, 0, NULL);
	HeapTuple	tup;
	Oid			last_relid = InvalidOid;
	IoRel	   *rel = NULL;
	bool		root = false;

	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_attribute form = (Form_pg_attribute) GETSTRUCT(tup);
		Oid			basetype;
		IoCol	   *col;
		IoKey		key;

		if (form->attnum <= 0 || form->attisdropped)
			continue;
		/* Attributes of one relation are usually stored together. */
		if (form->attrelid != last_relid)
		{
			last_relid = form->attrelid;
			rel = hash_search(st->rels, &last_relid, HASH_FIND, NULL);
			root = hash_search(st->parentset, &last_relid, HASH_FIND, NULL) != NULL &&
				is_root(st, last_relid);
		}
		if (root)
		{
			IoRootAtt	probe;
			IoRootAtt  *ra;

			MemSet(&probe, 0, sizeof(probe));
			probe.relid = form->attrelid;
			probe.attname = form->attname;
			ra = hash_search(st->rootatts, &probe, HASH_ENTER, NULL);
			ra->attnum = form->attnum;
		}
		if (rel == NULL)
			continue;
		basetype = integer_basetype(st, form->atttypid);
		if (!OidIsValid(basetype))
			continue;
		key = make_key(form->attrelid, form->attnum);
		col = hash_search(st->cols, &key, HASH_ENTER, NULL);
		col->rel = rel;
		col->atttypid = form->atttypid;
		col->basetype = basetype;
		col->attname = form->attname;
		col->inherited = form->attinhcount > 0;
		col->row = NULL;
		col->indexid = InvalidOid;
	}
	systable_endscan(scan);
	table_close(catalog, AccessShareLock);
}

/*
 * assign_rows
 *		Map every column to its row: a column inherited from the root of its
 *		tree (every column of a partition) to the root's column of the same
 *		name, any other to itself; create the rows of the latter.  Then
 *		collect each row's leaf columns (those of relkind r).
 */
static void
assign_rows(IoState *st)
{
	HASH_SEQ_STATUS hs;
	IoCol	   *col;

	hash_seq_init(&hs, st->cols);
	while ((col = hash_seq_search(&hs)) != NULL)
	{
		col->rowkey = col->key;
		if (col->inherited)
		{
			Oid			root = tree_root(st, col->key.relid);

			if (OidIsValid(root))
			{
				IoRootAtt	probe;
				IoRootAtt  *ra;

				MemSet(&probe, 0, sizeof(probe));
				probe.relid = root;
				probe.attname = col->attname;
				ra = hash_search(st->rootatts, &probe, HASH_FIND, NULL);
				if (ra != NULL)
					col->rowkey = make_key(root, ra->attnum);
			}
		}
		if (col->rowkey.relid == col->key.relid &&
			col->rowkey.attnum == col->key.attnum)
		{
			IoRow	   *row = hash_search(st->rows, &col->key, HASH_ENTER, NULL);

			memset((char *) row + sizeof(IoKey), 0, sizeof(IoRow) - sizeof(IoKey));
			row->col = col;
			switch (col->basetype)
			{
				case INT2OID:
					row->type_min = PG_INT16_MIN;
					row->type_max = PG_INT16_MAX;
					break;
				case INT4OID:
					row->type_min = PG_INT32_MIN;
					row->type_max = PG_INT32_MAX;
					break;
				default:
					row->type_min = PG_INT64_MIN;
					row->type_max = PG_INT64_MAX;
					break;
			}
		}
	}

	/* Rows exist now: link the columns, gather the leaves. */
	hash_seq_init(&hs, st->cols);
	while ((col = hash_seq_search(&hs)) != NULL)
	{
		col->row = hash_search(st->rows, &col->rowkey, HASH_FIND, NULL);
		if (col->row != NULL && col->rel->relkind == RELKIND_RELATION)
			col->row->leaves = lappend(col->row->leaves, col);
	}
}

/*
 * scan_pg_sequence
 *		The parameters of every sequence.
 */
static void
scan_pg_sequence(IoState *st)
{
	Relation	catalog = table_open(SequenceRelationId, AccessShareLock);
	SysScanDesc scan = systable_beginscan(catalog, InvalidOid, false, NULL, 0, NULL);
	HeapTuple	tup;

	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_sequence form = (Form_pg_sequence) GETSTRUCT(tup);
		IoSeq	   *seq = hash_search(st->seqs, &form->seqrelid, HASH_ENTER, NULL);

		seq->start = form->seqstart;
		seq->increment = form->seqincrement;
		seq->max = form->seqmax;
		seq->min = form->seqmin;
		seq->cycle = form->seqcycle;
		seq->read = false;
	}
	systable_endscan(scan);
	table_close(catalog, AccessShareLock);
}

/*
 * add_row_seq
 *		Record that seq feeds the column relid.attnum (if it is a reported
 *		integer column), once per sequence and kind.
 */
static void
add_row_seq(IoState *st, Oid relid, AttrNumber attnum, IoSeq *seq, bool identity)
{
	IoKey		key = make_key(relid, attnum);
	IoCol	   *col = hash_search(st->cols, &key, HASH_FIND, NULL);
	IoRowSeq   *rs;
	ListCell   *lc;

	if (col == NULL || col->row == NULL)
		return;
	foreach(lc, col->row->seqs)
	{
		rs = lfirst(lc);
		if (rs->seq == seq && rs->identity == identity)
			return;
	}
	rs = palloc(sizeof(IoRowSeq));
	rs->seq = seq;
	rs->identity = identity;
	col->row->seqs = lappend(col->row->seqs, rs);
}

/*
 * scan_pg_attrdef
 *		Which column each column default (pg_attrdef row) belongs to.
 */
static void
scan_pg_attrdef(IoState *st)
{
	Relation	catalog = table_open(AttrDefaultRelationId, AccessShareLock);
	SysScanDesc scan = systable_beginscan(catalog, InvalidOid, false, NULL, 0, NULL);
	HeapTuple	tup;

	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_attrdef form = (Form_pg_attrdef) GETSTRUCT(tup);
		IoAttrDef  *ad;

		ad = hash_search(st->attrdefs, &form->oid, HASH_ENTER, NULL);
		ad->adrelid = form->adrelid;
		ad->adnum = form->adnum;
	}
	systable_endscan(scan);
	table_close(catalog, AccessShareLock);
}

/*
 * scan_pg_depend
 *		The sequences feeding columns, from dependencies only (default text is
 *		never parsed): a sequence's 'a' (serial, OWNED BY) or 'i' (identity)
 *		dependency on a column, and a column default's 'n' dependency on a
 *		sequence (nextval('s'), also in a larger expression).
 */
static void
scan_pg_depend(IoState *st)
{
	Relation	catalog = table_open(DependRelationId, AccessShareLock);
	SysScanDesc scan = systable_beginscan(catalog, InvalidOid, false, NULL, 0, NULL);
	HeapTuple	tup;

	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_depend form = (Form_pg_depend) GETSTRUCT(tup);
		IoSeq	   *seq;

		if (form->refclassid != RelationRelationId)
			continue;
		if (form->classid == RelationRelationId &&
			(form->deptype == DEPENDENCY_AUTO ||
			 form->deptype == DEPENDENCY_INTERNAL) &&
			form->refobjsubid > 0)
		{
			seq = hash_search(st->seqs, &form->objid, HASH_FIND, NULL);
			if (seq != NULL)
				add_row_seq(st, form->refobjid, form->refobjsubid, seq,
							form->deptype == DEPENDENCY_INTERNAL);
		}
		else if (form->classid == AttrDefaultRelationId &&
				 form->deptype == DEPENDENCY_NORMAL)
		{
			IoAttrDef  *ad;

			seq = hash_search(st->seqs, &form->refobjid, HASH_FIND, NULL);
			if (seq == NULL)
				continue;
			ad = hash_search(st->attrdefs, &form->objid, HASH_FIND, NULL);
			if (ad != NULL)
				add_row_seq(st, ad->adrelid, ad->adnum, seq, false);
		}
	}
	systable_endscan(scan);
	table_close(catalog, AccessShareLock);
}

/*
 * int2_array
 *		The elements of a non-null int2[] catalog column.
 */
static int16 *
int2_array(HeapTuple tup, int attnum, TupleDesc desc, int *n)
{
	bool		isnull;
	Datum		d = heap_getattr(tup, attnum, desc, &isnull);
	ArrayType  *arr;

	if (isnull)
	{
		*n = 0;
		return NULL;
	}
	arr = DatumGetArrayTypeP(d);
	if (ARR_NDIM(arr) != 1 || ARR_HASNULL(arr) || ARR_ELEMTYPE(arr) != INT2OID)
	{
		*n = 0;
		return NULL;
	}
	*n = ARR_DIMS(arr)[0];
	return (int16 *) ARR_DATA_PTR(arr);
}

/*
 * scan_pg_constraint
 *		Foreign keys, one pair per column, between rows.  Constraints that
 *		PostgreSQL clones onto partitions (conparentid set) are left out: the
 *		parent's constraint stands for them.  A column narrower than the key
 *		it references borrows the key's measurements.
 */
static void
scan_pg_constraint(IoState *st)
{
	Relation	catalog = table_open(ConstraintRelationId, AccessShareLock);
	TupleDesc	desc = RelationGetDescr(catalog);
	SysScanDesc scan = systable_beginscan(catalog, InvalidOid, false, NULL, 0, NULL);
	HeapTuple	tup;

	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_constraint form = (Form_pg_constraint) GETSTRUCT(tup);
		int16	   *conkey;
		int16	   *confkey;
		int			n;
		int			nf;
		int			i;

		if (form->contype != CONSTRAINT_FOREIGN || OidIsValid(form->conparentid))
			continue;
		conkey = int2_array(tup, Anum_pg_constraint_conkey, desc, &n);
		confkey = int2_array(tup, Anum_pg_constraint_confkey, desc, &nf);
		for (i = 0; i < n && i < nf; i++)
		{
			IoKey		ck = make_key(form->conrelid, conkey[i]);
			IoKey		rk = make_key(form->confrelid, confkey[i]);
			IoCol	   *cc = hash_search(st->cols, &ck, HASH_FIND, NULL);
			IoCol	   *rc = hash_search(st->cols, &rk, HASH_FIND, NULL);
			IoFkPair   *fk;

			if (cc == NULL || rc == NULL || cc->row == NULL || rc->row == NULL)
				continue;
			fk = palloc(sizeof(IoFkPair));
			fk->row = cc->row;
			fk->ref = rc->row;
			fk->basetype = cc->basetype;
			fk->ref_basetype = rc->basetype;
			st->fkpairs = lappend(st->fkpairs, fk);
			rc->row->referenced_by = lappend(rc->row->referenced_by, fk);
			if (type_rank(cc->basetype) < type_rank(rc->basetype))
			{
				cc->row->narrow_refs = lappend(cc->row->narrow_refs, rc->row);
				rc->row->narrow_ref = true;
			}
		}
	}
	systable_endscan(scan);
	table_close(catalog, AccessShareLock);
}

/*
 * scan_pg_index
 *		For every integer column that leads a valid, ready, live, non-partial
 *		btree index, the index to read: unique ones first, then the fewest
 *		columns, then the lowest OID.
 */
static void
scan_pg_index(IoState *st)
{
	Relation	catalog = table_open(IndexRelationId, AccessShareLock);
	SysScanDesc scan = systable_beginscan(catalog, InvalidOid, false, NULL, 0, NULL);
	HeapTuple	tup;

	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_index form = (Form_pg_index) GETSTRUCT(tup);
		IoKey		key;
		IoCol	   *col;
		bool		better;

		if (!form->indisvalid || !form->indisready || !form->indislive ||
			form->indnatts < 1 || form->indkey.values[0] == 0)
			continue;
		key = make_key(form->indrelid, form->indkey.values[0]);
		col = hash_search(st->cols, &key, HASH_FIND, NULL);
		if (col == NULL ||
			hash_search(st->btrees, &form->indexrelid, HASH_FIND, NULL) == NULL ||
			!heap_attisnull(tup, Anum_pg_index_indpred, NULL))
			continue;
		if (!OidIsValid(col->indexid))
			better = true;
		else if (form->indisunique != col->index_unique)
			better = form->indisunique;
		else if (form->indnatts != col->index_natts)
			better = form->indnatts < col->index_natts;
		else
			better = form->indexrelid < col->indexid;
		if (better)
		{
			col->indexid = form->indexrelid;
			col->index_unique = form->indisunique;
			col->index_natts = form->indnatts;
		}
	}
	systable_endscan(scan);
	table_close(catalog, AccessShareLock);
}

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
 * measure_row
 *		A row's own measurements: its sequences (read once per sequence), the
 *		ends of an index on every leaf, else its statistics bounds.
 *
 * Index ends and statistics are read for int2/int4 columns without a
 * sequence and for keys that narrower foreign-key columns reference.  The
 * index measurement counts only when every leaf table has an index leading
 * with the column; its status is unreadable when any leaf is, locked when
 * any is, unavailable when all are.  Statistics are read when there is no
 * usable index measurement.
 */
static void
measure_row(IoState *st, IoRow *row)
{
	ListCell   *lc;
	bool		all_indexed;
	bool		index_ok = false;

	foreach(lc, row->seqs)
	{
		IoRowSeq   *rs = lfirst(lc);
		IoMeas	   *m;

		if (!rs->seq->read)
		{
			MemoryContext old = MemoryContextSwitchTo(st->probecxt);

			rs->seq->status = storagelab_sequence_state(rs->seq->seqid,
														&rs->seq->last_value,
														&rs->seq->is_called);
			rs->seq->read = true;
			MemoryContextSwitchTo(old);
			MemoryContextReset(st->probecxt);
		}
		m = new_meas(IO_SEQUENCE);
		m->seq = rs->seq;
		m->identity = rs->identity;
		m->exact = true;
		m->status = rs->seq->status;
		row->own = lappend(row->own, m);
	}

	if (row->seqs != NIL ||
		(row->col->basetype == INT8OID && !row->narrow_ref))
		return;

	/* Index ends of every leaf. */
	all_indexed = row->leaves != NIL;
	foreach(lc, row->leaves)
	{
		if (!OidIsValid(((IoCol *) lfirst(lc))->indexid))
			all_indexed = false;
	}
	if (row->leaves != NIL)
	{
		bool		any_value = false;
		bool		approximate = false;
		bool		locked = false;
		bool		all_unavailable = true;
		int64		minv = 0;
		int64		maxv = 0;
		IoMeas	   *m;

		foreach(lc, row->leaves)
		{
			IoCol	   *leaf = lfirst(lc);
			const char *status;
			int64		lmin = 0;
			int64		lmax = 0;
			MemoryContext old;

			if (!OidIsValid(leaf->indexid))
				continue;
			CHECK_FOR_INTERRUPTS();
			old = MemoryContextSwitchTo(st->probecxt);
			status = storagelab_index_bounds(leaf->indexid, &lmin, &lmax);
			MemoryContextSwitchTo(old);
			MemoryContextReset(st->probecxt);

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

		if (all_indexed)
		{
			m = new_meas(IO_INDEX);
			if (row->leaf_unreadable)
				m->status = SL_STATUS_UNREADABLE;
			else if (locked)
				m->status = SL_STATUS_LOCKED;
			else if (all_unavailable)
				m->status = SL_STATUS_UNAVAILABLE;
			else
			{
				index_ok = true;
				m->has_values = any_value;
				m->min_value = minv;
				m->max_value = maxv;
				m->status = approximate ? "estimate" :
					any_value ? SL_STATUS_OK : SL_STATUS_EMPTY;
			}
			m->exact = !approximate;
			row->own = lappend(row->own, m);
		}
	}

	/* Statistics when the index gave nothing usable. */
	if (!index_ok)
	{
		const char *status;
		int64		smin = 0;
		int64		smax = 0;
		MemoryContext old = MemoryContextSwitchTo(st->probecxt);

		CHECK_FOR_INTERRUPTS();
		status = storagelab_stats_bounds(row->key.relid, row->key.attnum,
										 &smin, &smax);
		MemoryContextSwitchTo(old);
		MemoryContextReset(st->probecxt);
		if (status == SL_STATUS_OK)
		{
			IoMeas	   *m = new_meas(IO_STATISTICS);

			m->has_values = true;
			m->min_value = smin;
			m->max_value = smax;
			m->exact = false;
			m->status = "estimate";
			row->own = lappend(row->own, m);
		}
		else if (status == SL_STATUS_UNREADABLE)
			row->stats_unreadable = true;
	}
}

/*
 * wide_to_numeric
 *		A wide integer as numeric.
 */
static Numeric
wide_to_numeric(io_wide v)
{
#ifdef HAVE_INT128
	if (v >= PG_INT64_MIN && v <= PG_INT64_MAX)
		return int64_to_numeric((int64) v);
	/* Beyond int64 (only next to bigint bounds): v = hi * 10^9 + lo. */
	return DatumGetNumeric(DirectFunctionCall2(numeric_add,
											   DirectFunctionCall2(numeric_mul,
																   NumericGetDatum(int64_to_numeric((int64) (v / 1000000000))),
																   NumericGetDatum(int64_to_numeric(1000000000))),
											   NumericGetDatum(int64_to_numeric((int64) (v % 1000000000)))));
#else
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
#ifdef HAVE_INT128
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

#ifdef HAVE_INT128
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
		int64		lo = Max(s->min, row->type_min);
		int64		hi = Min(s->max, row->type_max);
		int64		base = Min(Max(s->start, lo), hi);

		u.has_lim = true;
		u.lim = s->increment > 0 ? hi : lo;
		u.has_cycles = true;
		u.cycles = s->cycle && s->max <= row->type_max && s->min >= row->type_min;
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

		toward_min = (double) m->min_value / (double) row->type_min >
			Max((double) m->max_value / (double) row->type_max, 0.0);
		u.has_cur = true;
		u.cur = toward_min ? m->min_value : m->max_value;
		u.has_lim = true;
		u.lim = toward_min ? row->type_min : row->type_max;
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
					quote_identifier(NameStr(row->col->rel->relname)),
					quote_identifier(NameStr(row->col->attname)));
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
 * row_cmp
 *		qsort comparator of rows: by relation OID, then column number.
 */
static int
row_cmp(const void *a, const void *b)
{
	const IoRow *ra = *(IoRow *const *) a;
	const IoRow *rb = *(IoRow *const *) b;

	if (ra->key.relid != rb->key.relid)
		return ra->key.relid < rb->key.relid ? -1 : 1;
	if (ra->key.attnum != rb->key.attnum)
		return ra->key.attnum < rb->key.attnum ? -1 : 1;
	return 0;
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

	memset(nulls, true, sizeof(nulls));
	values[0] = ObjectIdGetDatum(row->key.relid);
	values[1] = Int16GetDatum((int16) row->key.attnum);
	values[2] = NameGetDatum(col->rel->nspname);
	values[3] = NameGetDatum(&col->rel->relname);
	values[4] = NameGetDatum(&col->attname);
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
 * storagelab_int_overflow_measurements
 *		SQL: storagelab.int_overflow_measurements() RETURNS TABLE (row_rel oid,
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
	IoState		st;
	IoRow	  **rows;
	IoRow	   *row;
	HASH_SEQ_STATUS hs;
	long		nrows;
	long		i;
	Datum		empty_array;

	InitMaterializedSRF(fcinfo, 0);

	workcxt = AllocSetContextCreate(CurrentMemoryContext,
									"int_overflow measurements",
									ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(workcxt);

	memset(&st, 0, sizeof(st));
	st.nsps = make_hash("int_overflow namespaces", sizeof(Oid), sizeof(IoNsp), 64);
	st.rels = make_hash("int_overflow relations", sizeof(Oid), sizeof(IoRel), 1024);
	st.btrees = make_hash("int_overflow btrees", sizeof(Oid), sizeof(Oid), 1024);
	st.parents = make_hash("int_overflow parents", sizeof(Oid), sizeof(IoParents), 64);
	st.parentset = make_hash("int_overflow parent set", sizeof(Oid), sizeof(Oid), 64);
	st.rootatts = make_hash("int_overflow root columns",
							offsetof(IoRootAtt, attnum), sizeof(IoRootAtt), 64);
	st.types = make_hash("int_overflow types", sizeof(Oid), sizeof(IoType), 64);
	st.cols = make_hash("int_overflow columns", sizeof(IoKey), sizeof(IoCol), 4096);
	st.rows = make_hash("int_overflow rows", sizeof(IoKey), sizeof(IoRow), 4096);
	st.seqs = make_hash("int_overflow sequences", sizeof(Oid), sizeof(IoSeq), 1024);
	st.attrdefs = make_hash("int_overflow defaults", sizeof(Oid), sizeof(IoAttrDef), 1024);
	st.probecxt = AllocSetContextCreate(workcxt, "int_overflow probe",
										ALLOCSET_DEFAULT_SIZES);

	/* The catalogs, each read once. */
	scan_pg_class(&st);
	scan_pg_inherits(&st);
	scan_pg_attribute(&st);
	assign_rows(&st);
	scan_pg_sequence(&st);
	scan_pg_attrdef(&st);
	scan_pg_depend(&st);
	scan_pg_constraint(&st);
	scan_pg_index(&st);

	/* The rows in a stable order (relation OID, column number). */
	nrows = hash_get_num_entries(st.rows);
	rows = palloc(sizeof(IoRow *) * Max(nrows, 1));
	i = 0;
	hash_seq_init(&hs, st.rows);
	while ((row = hash_seq_search(&hs)) != NULL)
		rows[i++] = row;
	qsort(rows, nrows, sizeof(IoRow *), row_cmp);

	empty_array = PointerGetDatum(construct_empty_array(TEXTOID));

	/* Own measurements first: foreign-key columns borrow them. */
	for (i = 0; i < nrows; i++)
	{
		CHECK_FOR_INTERRUPTS();
		measure_row(&st, rows[i]);
	}

	for (i = 0; i < nrows; i++)
	{
		IoMeas	   *best = NULL;
		IoUsage		best_u;
		ListCell   *lc;

		row = rows[i];
		CHECK_FOR_INTERRUPTS();
		/* bigint columns are listed only when a sequence feeds them */
		if (row->col->basetype == INT8OID && row->seqs == NIL)
			continue;

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
		/* A narrower column breaks first: the wider key's measurements. */
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

	MemoryContextSwitchTo(old);
	MemoryContextDelete(workcxt);
	return (Datum) 0;
}
