/*-------------------------------------------------------------------------
 *
 * int_overflow_catalog.c
 *	  The catalog walk behind the storagelab.int_overflow view.
 *
 * storagelab_int_overflow_rows() finds the reported columns and what can
 * measure them, for src/int_overflow_measure.c:
 *
 *	- every int2/int4 column, and every integer column a sequence feeds, of
 *	  the tables and partitioned tables outside pg_catalog,
 *	  information_schema, pg_toast* and storagelab (other sessions'
 *	  temporary tables are skipped), domains over integers at any depth
 *	  included.  A column inherited from the root of its tree (every column
 *	  of a partition) belongs to the row of the root's column of the same
 *	  name; any other column is a row of its own;
 *	- the sequences that feed a row, from pg_depend only: a serial sequence
 *	  ('a', OWNED BY the column), an identity sequence ('i'), and any column
 *	  default (pg_attrdef) that depends on a sequence ('n'); default text is
 *	  never parsed;
 *	- the row's leaf tables (relkind r: the table itself, partitions,
 *	  inheritance children) and, for each, the btree index to read;
 *	- foreign-key column pairs between rows.
 *
 * Each catalog (pg_class, pg_inherits, pg_sequence, pg_attrdef, pg_depend,
 * pg_constraint, pg_attribute, pg_index, pg_statistic) is read once with a
 * sequential system-table scan under the catalog snapshot, and joined in
 * hash tables: the cost is linear in the size of the catalogs.  The three
 * looked up most (relations, sequences, btree indexes) are simplehash
 * tables (lib/simplehash.h, inlined, open addressing) of pointers to entries
 * in the walk's storage, which therefore never move and outlive the tables;
 * a column is found through its relation (column_of()); the other lookups
 * are dynahash tables.  Sequences
 * and foreign keys are read before the columns, so that only the bigint
 * columns they need are kept.  The pg_class rows of the reported tables,
 * of the sequences and of the btree indexes are kept for the probes
 * (SlClass, SlIndex: privileges and relfilenodes without a catalog-cache
 * lookup).  Nothing here takes a lock on a user relation, reads one, or
 * writes anything.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/transam.h"
#include "catalog/namespace.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_attrdef.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_class.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_depend.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_namespace_d.h"
#include "catalog/pg_sequence.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type_d.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/sinval.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "compat.h"
#include "int_overflow_catalog.h"

/* A sequence feeding a column, found before the columns are read. */
typedef struct IoLink
{
	IoKey		key;
	IoSeq	   *seq;
	bool		identity;
} IoLink;

/* A foreign-key column pair, found before the columns are read. */
typedef struct IoKeyPair
{
	IoKey		key;			/* the referencing column */
	IoKey		ref;			/* the referenced column */
} IoKeyPair;

/*
 * An entry of an OID-keyed simplehash table: a pointer to the entry proper
 * (IoRel, IoSeq, SlIndex), which starts with the key.
 */
typedef struct IoOidSlot
{
	Oid			key;
	char		status;			/* simplehash's */
	void	   *entry;
} IoOidSlot;

#define SH_PREFIX iooid
#define SH_ELEMENT_TYPE IoOidSlot
#define SH_KEY_TYPE Oid
#define SH_KEY key
#define SH_HASH_KEY(tb, k) murmurhash32(k)
#define SH_EQUAL(tb, a, b) ((a) == (b))
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

/* Everything the walk collects, and its lookup tables. */
typedef struct IoState
{
	HTAB	   *nsps;			/* Oid -> IoNsp */
	struct IoNsp *last_nsp;		/* namespace_entry()'s last answer */
	iooid_hash *rels;			/* Oid -> IoRel */
	iooid_hash *btrees;			/* Oid -> SlIndex of btree indexes */
	HTAB	   *parents;		/* Oid -> IoParents */
	HTAB	   *parentset;		/* Oid of every parent */
	HTAB	   *rootatts;		/* IoRootAtt */
	HTAB	   *types;			/* Oid -> IoType */
	IoCol	  **colv;			/* every IoCol, in the order read */
	long		ncols;
	long		colv_size;
	IoRel	   *last_rel;		/* column_of()'s last relation, and its OID */
	Oid			last_relid;
	iooid_hash *seqs;			/* Oid -> IoSeq */
	HTAB	   *attrdefs;		/* Oid -> IoAttrDef */
	HTAB	   *wanted;			/* IoKey of bigint columns to keep */
	IoLink	   *links;			/* sequences feeding columns, to apply */
	long		nlinks;
	long		links_size;
	IoKeyPair  *fks;			/* foreign-key column pairs, to apply */
	long		nfks;
	long		fks_size;
	uint64		read_at;		/* SharedInvalidMessageCounter before the walk */
	MemoryContext keep;			/* the rows and what they point to */
	MemoryContext scratch;		/* lookup tables freed before returning */
	char	   *store;			/* walk_alloc()'s current block (in keep) */
	Size		store_free;		/* bytes left in it */
	IoRow	  **rows;			/* every row, in creation order */
	long		nrows;
	long		rows_size;		/* room in rows */
} IoState;

/* Size of walk_alloc()'s blocks. */
#define IO_STORE_BLOCK	(256 * 1024)

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
make_hash(const char *name, Size keysize, Size entrysize, long nelem,
		  MemoryContext cxt)
{
	HASHCTL		ctl;

	ctl.keysize = keysize;
	ctl.entrysize = entrysize;
	ctl.hcxt = cxt;
	return hash_create(name, nelem, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

/*
 * walk_alloc
 *		size bytes (MAXALIGNed when aligned) from the walk's storage: blocks
 *		of the current memory context carved in order, without a header per
 *		allocation.  Never freed one by one.
 */
static void *
walk_alloc(IoState *st, Size size, bool aligned)
{
	char	   *p;

	if (aligned)
	{
		Size		pad = (Size) (MAXALIGN((uintptr_t) st->store) - (uintptr_t) st->store);

		if (st->store_free >= pad)
		{
			st->store += pad;
			st->store_free -= pad;
		}
		size = MAXALIGN(size);
	}
	if (st->store_free < size)
	{
		Size		block = Max(size, IO_STORE_BLOCK);

		st->store = MemoryContextAlloc(st->keep, block);
		st->store_free = block;
	}
	p = st->store;
	st->store += size;
	st->store_free -= size;
	return p;
}

/*
 * walk_name
 *		A copy of a name in the walk's storage, its length plus one byte.
 */
static const char *
walk_name(IoState *st, const NameData *name)
{
	Size		len = strlen(NameStr(*name)) + 1;
	char	   *p = walk_alloc(st, len, false);

	memcpy(p, NameStr(*name), len);
	return p;
}

/*
 * oid_find
 *		The entry of key in a simplehash table, NULL if none.
 */
static inline void *
oid_find(iooid_hash *tb, Oid key)
{
	IoOidSlot  *slot = iooid_lookup(tb, key);

	return slot != NULL ? slot->entry : NULL;
}

/*
 * oid_enter
 *		The entry of key in a simplehash table; a new one (size bytes in the
 *		walk's storage, zeroed but for the key it starts with) if none.
 */
static void *
oid_enter(IoState *st, iooid_hash *tb, Oid key, Size size)
{
	bool		found;
	IoOidSlot  *slot = iooid_insert(tb, key, &found);

	if (!found)
	{
		slot->entry = walk_alloc(st, size, true);
		memset(slot->entry, 0, size);
		*(Oid *) slot->entry = key;
	}
	return slot->entry;
}

/*
 * column_of
 *		The IoCol of relid's column attnum, NULL if none: a lookup of the
 *		relation (none when the last call's was the same, as in the scan of
 *		pg_statistic, which meets a table's rows together), then its integer
 *		columns.  No hash table of every column: less memory, and as fast.
 */
static IoCol *
column_of(IoState *st, Oid relid, AttrNumber attnum)
{
	IoCol	   *col;

	if (relid != st->last_relid)
	{
		st->last_relid = relid;
		st->last_rel = oid_find(st->rels, relid);
	}
	if (st->last_rel == NULL)
		return NULL;
	for (col = st->last_rel->cols; col != NULL; col = col->next_in_rel)
	{
		if (col->key.attnum == attnum)
			return col;
	}
	return NULL;
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
 *		pg_catalog, information_schema, storagelab, storagelab_internal and
 *		pg_toast*.
 */
static IoNsp *
namespace_entry(IoState *st, Oid nspid)
{
	IoNsp	   *nsp;
	bool		found;

	/* the tables of a schema are mostly stored together */
	if (st->last_nsp != NULL && st->last_nsp->nspid == nspid)
		return st->last_nsp;
	nsp = hash_search(st->nsps, &nspid, HASH_ENTER, &found);
	st->last_nsp = nsp;
	if (!found)
	{
		char	   *name = get_namespace_name(nspid);

		namestrcpy(&nsp->nspname, name ? name : "");
		nsp->excluded = name == NULL ||
			strcmp(name, "pg_catalog") == 0 ||
			strcmp(name, "information_schema") == 0 ||
			strcmp(name, "storagelab") == 0 ||
			strcmp(name, "storagelab_internal") == 0 ||
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
	/* another type of pg_type.dat: a base type, never a domain */
	if (typid < FirstGenbkiObjectId)
		return InvalidOid;
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
	Relation	catalog;
	SysScanDesc scan;
	HeapTuple	tup;

	/* Before the catalog snapshot: see int_overflow.c on read_at. */
	storagelab_class_watch_begin();
	st->read_at = SharedInvalidMessageCounter;
	catalog = table_open(RelationRelationId, AccessShareLock);
	scan = systable_beginscan(catalog, InvalidOid, false, NULL, 0, NULL);
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
			rel = oid_enter(st, st->rels, form->oid, sizeof(IoRel));
			rel->relkind = form->relkind;
			rel->nspname = &nsp->nspname;
			rel->relname = walk_name(st, &form->relname);
			storagelab_class_from_tuple(&rel->cls, tup, RelationGetDescr(catalog));
		}
		else if (form->relkind == RELKIND_SEQUENCE)
		{
			IoSeq	   *seq = oid_enter(st, st->seqs, form->oid, sizeof(IoSeq));

			seq->has_class = true;
			storagelab_class_from_tuple(&seq->cls, tup, RelationGetDescr(catalog));
		}
		else if (form->relkind == RELKIND_INDEX && form->relam == BTREE_AM_OID &&
				 form->relnamespace != PG_TOAST_NAMESPACE)
		{
			/* (a TOAST table's index: no reported column is in one) */
			SlIndex    *index = oid_enter(st, st->btrees, form->oid, sizeof(SlIndex));

			index->relfilenode = form->relfilenode;
			index->reltablespace = form->reltablespace;
			index->relpersistence = form->relpersistence;
			index->descending = false;
		}
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
		MemoryContext old;

		p = hash_search(st->parents, &form->inhrelid, HASH_ENTER, &found);
		if (!found)
			p->parents = NIL;
		old = MemoryContextSwitchTo(st->scratch);
		p->parents = lappend_oid(p->parents, form->inhparent);
		MemoryContextSwitchTo(old);
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
 * tree_root_in_scratch
 *		The root of the tree relid is a partition or child of: the closest
 *		ancestor without a parent (the lowest OID among equally close ones,
 *		which only multiple inheritance can produce), or InvalidOid when relid
 *		has no parent.  Gives up beyond 100 levels, as the SQL it replaces did.
 */
static Oid
tree_root_in_scratch(IoState *st, Oid relid)
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
 * tree_root
 *		tree_root_in_scratch(), its lists allocated in the walk's scratch
 *		context.
 */
static Oid
tree_root(IoState *st, Oid relid)
{
	MemoryContext old = MemoryContextSwitchTo(st->scratch);
	Oid			root = tree_root_in_scratch(st, relid);

	MemoryContextSwitchTo(old);
	return root;
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
	TupleDesc	desc = RelationGetDescr(catalog);
	SysScanDesc scan = systable_beginscan(catalog, InvalidOid, false, NULL, 0, NULL);
	HeapTuple	tup;
	Oid			last_relid = InvalidOid;
	IoRel	   *rel = NULL;
	bool		root = false;
	bool		any_parent = hash_get_num_entries(st->parentset) > 0;

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
			rel = oid_find(st->rels, last_relid);
			root = any_parent &&
				hash_search(st->parentset, &last_relid, HASH_FIND, NULL) != NULL &&
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
		/* bigint: only where a sequence or a foreign key needs it (or a tree) */
		if (basetype == INT8OID && form->attinhcount == 0 && !root &&
			hash_search(st->wanted, &key, HASH_FIND, NULL) == NULL)
			continue;
		col = walk_alloc(st, sizeof(IoCol), true);
		memset(col, 0, sizeof(IoCol));
		col->key = key;
		col->rel = rel;
		col->next_in_rel = rel->cols;
		rel->cols = col;
		if (st->ncols == st->colv_size)
		{
			st->colv_size *= 2;
			st->colv = repalloc_huge(st->colv, sizeof(IoCol *) * st->colv_size);
		}
		st->colv[st->ncols++] = col;
		col->atttypid = form->atttypid;
		col->basetype = basetype;
		col->attname = walk_name(st, &form->attname);
		col->inherited = form->attinhcount > 0;
		if (!heap_attisnull(tup, Anum_pg_attribute_attacl, desc))
		{
			bool		isnull;

			col->attacl = DatumGetAclPCopy(heap_getattr(tup, Anum_pg_attribute_attacl,
													  desc, &isnull));
		}
	}
	systable_endscan(scan);
	table_close(catalog, AccessShareLock);
}

/*
 * new_row
 *		The row of col, its own column, in the walk's storage.
 */
static IoRow *
new_row(IoState *st, IoCol *col)
{
	IoRow	   *row = walk_alloc(st, sizeof(IoRow), true);

	memset(row, 0, sizeof(IoRow));
	row->key = col->key;
	row->col = col;
	col->row = row;
	if (st->nrows == st->rows_size)
	{
		st->rows_size *= 2;
		st->rows = repalloc(st->rows, sizeof(IoRow *) * st->rows_size);
	}
	st->rows[st->nrows++] = row;
	return row;
}

/*
 * root_column
 *		For a column inherited from the root of its tree (every column of a
 *		partition), the root's column of the same name, when that is an
 *		integer column of a reported relation; NULL otherwise.  *mapped says
 *		whether the column belongs to the root's row at all (a root with a
 *		column of that name).
 */
static IoCol *
root_column(IoState *st, IoCol *col, bool *mapped)
{
	Oid			root;
	IoRootAtt	probe;
	IoRootAtt  *ra;

	*mapped = false;
	if (!col->inherited)
		return NULL;
	root = tree_root(st, col->key.relid);
	if (!OidIsValid(root))
		return NULL;
	MemSet(&probe, 0, sizeof(probe));
	probe.relid = root;
	namestrcpy(&probe.attname, col->attname);
	ra = hash_search(st->rootatts, &probe, HASH_FIND, NULL);
	if (ra == NULL)
		return NULL;
	*mapped = true;
	return column_of(st, root, ra->attnum);
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
	IoCol	   *col;
	bool		mapped;
	long		i;

	/*
	 * The rows: columns of their own (a root's columns are not inherited).
	 * In the order read, so that a table's rows lie side by side.
	 */
	for (i = 0; i < st->ncols; i++)
	{
		col = st->colv[i];
		if (!col->inherited)
			new_row(st, col);
		else
		{
			(void) root_column(st, col, &mapped);
			if (!mapped)
				new_row(st, col);
		}
	}

	/* Rows exist now: link the inherited columns, gather the leaves. */
	for (i = 0; i < st->ncols; i++)
	{
		col = st->colv[i];
		if (col->row == NULL)
		{
			IoCol	   *rootcol = root_column(st, col, &mapped);

			col->row = rootcol != NULL ? rootcol->row : NULL;
		}
		if (col->row != NULL && col->rel->relkind == RELKIND_RELATION)
		{
			col->next_leaf = col->row->leaves;
			col->row->leaves = col;
		}
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
		IoSeq	   *seq = oid_enter(st, st->seqs, form->seqrelid, sizeof(IoSeq));

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
 *		Record that seq feeds the column key (if it is a reported integer
 *		column), once per sequence and kind.
 */
static void
add_row_seq(IoState *st, IoKey key, IoSeq *seq, bool identity)
{
	IoCol	   *col = column_of(st, key.relid, key.attnum);
	IoRowSeq   *rs;
	IoRowSeq  **tail;

	if (col == NULL || col->row == NULL)
		return;
	for (tail = &col->row->seqs; *tail != NULL; tail = &(*tail)->next)
	{
		if ((*tail)->seq == seq && (*tail)->identity == identity)
			return;
	}
	rs = walk_alloc(st, sizeof(IoRowSeq), true);
	rs->seq = seq;
	rs->identity = identity;
	rs->next = NULL;
	*tail = rs;
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
 * want_column
 *		Keep the column key when it is a bigint one (scan_pg_attribute()
 *		leaves out the others: a bigint column is reported only when a
 *		sequence feeds it, and measured only when a narrower foreign-key
 *		column references it).
 */
static void
want_column(IoState *st, Oid relid, AttrNumber attnum)
{
	IoKey		key = make_key(relid, attnum);

	hash_search(st->wanted, &key, HASH_ENTER, NULL);
}

/*
 * pending_link
 *		Record that seq feeds the column relid.attnum, applied by
 *		add_row_seq() once the rows exist, in the order found.
 */
static void
pending_link(IoState *st, Oid relid, AttrNumber attnum, IoSeq *seq, bool identity)
{
	IoLink	   *link;

	if (st->nlinks == st->links_size)
	{
		st->links_size = Max(st->links_size * 2, 1024);
		st->links = st->links == NULL ?
			MemoryContextAlloc(st->scratch, sizeof(IoLink) * st->links_size) :
			repalloc(st->links, sizeof(IoLink) * st->links_size);
	}
	link = &st->links[st->nlinks++];
	link->key = make_key(relid, attnum);
	link->seq = seq;
	link->identity = identity;
	want_column(st, relid, attnum);
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
			seq = oid_find(st->seqs, form->objid);
			if (seq != NULL)
				pending_link(st, form->refobjid, form->refobjsubid, seq,
							 form->deptype == DEPENDENCY_INTERNAL);
		}
		else if (form->classid == AttrDefaultRelationId &&
				 form->deptype == DEPENDENCY_NORMAL)
		{
			IoAttrDef  *ad;

			seq = oid_find(st->seqs, form->refobjid);
			if (seq == NULL)
				continue;
			ad = hash_search(st->attrdefs, &form->objid, HASH_FIND, NULL);
			if (ad != NULL)
				pending_link(st, ad->adrelid, ad->adnum, seq, false);
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
 *		Foreign keys, one pair per column (applied by apply_foreign_keys()).
 *		Constraints that PostgreSQL clones onto partitions (conparentid set)
 *		are left out: the parent's constraint stands for them.
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
			IoKeyPair  *pair;

			if (st->nfks == st->fks_size)
			{
				st->fks_size = Max(st->fks_size * 2, 256);
				st->fks = st->fks == NULL ?
					MemoryContextAlloc(st->scratch, sizeof(IoKeyPair) * st->fks_size) :
					repalloc(st->fks, sizeof(IoKeyPair) * st->fks_size);
			}
			pair = &st->fks[st->nfks++];
			pair->key = make_key(form->conrelid, conkey[i]);
			pair->ref = make_key(form->confrelid, confkey[i]);
			want_column(st, form->confrelid, confkey[i]);
		}
	}
	systable_endscan(scan);
	table_close(catalog, AccessShareLock);
}

/*
 * apply_links
 *		The sequences scan_pg_depend() found, on the rows of their columns.
 */
static void
apply_links(IoState *st)
{
	long		i;

	for (i = 0; i < st->nlinks; i++)
		add_row_seq(st, st->links[i].key, st->links[i].seq, st->links[i].identity);
}

/*
 * apply_foreign_keys
 *		The pairs scan_pg_constraint() found, between the rows of integer
 *		columns.  A column narrower than the key it references borrows the
 *		key's measurements.
 */
static void
apply_foreign_keys(IoState *st)
{
	long		i;

	for (i = 0; i < st->nfks; i++)
	{
		IoCol	   *cc = column_of(st, st->fks[i].key.relid, st->fks[i].key.attnum);
		IoCol	   *rc = column_of(st, st->fks[i].ref.relid, st->fks[i].ref.attnum);
		IoFkPair   *fk;

		if (cc == NULL || rc == NULL || cc->row == NULL || rc->row == NULL)
			continue;
		fk = palloc(sizeof(IoFkPair));
		fk->row = cc->row;
		fk->ref = rc->row;
		fk->basetype = cc->basetype;
		fk->ref_basetype = rc->basetype;
		rc->row->referenced_by = lappend(rc->row->referenced_by, fk);
		if (type_rank(cc->basetype) < type_rank(rc->basetype))
		{
			cc->row->narrow_refs = lappend(cc->row->narrow_refs, rc->row);
			rc->row->narrow_ref = true;
		}
	}
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
	TupleDesc	desc = RelationGetDescr(catalog);
	SysScanDesc scan = systable_beginscan(catalog, InvalidOid, false, NULL, 0, NULL);
	HeapTuple	tup;

	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_index form = (Form_pg_index) GETSTRUCT(tup);
		IoCol	   *col;
		SlIndex    *index;
		bool		better;

		if (!form->indisvalid || !form->indisready || !form->indislive ||
			form->indnatts < 1 || form->indkey.values[0] == 0)
			continue;
		col = column_of(st, form->indrelid, form->indkey.values[0]);
		if (col == NULL ||
			(index = oid_find(st->btrees, form->indexrelid)) == NULL ||
			!heap_attisnull(tup, Anum_pg_index_indpred, NULL))
			continue;
		if (col->index == NULL)
			better = true;
		else if (form->indisunique != col->index_unique)
			better = form->indisunique;
		else if (form->indnatts != col->index_natts)
			better = form->indnatts < col->index_natts;
		else
			better = form->indexrelid < col->index->relid;
		if (better)
		{
			bool		isnull;
			Datum		d = heap_getattr(tup, Anum_pg_index_indoption, desc, &isnull);

			index->descending = !isnull &&
				(((int2vector *) DatumGetPointer(d))->values[0] & INDOPTION_DESC) != 0;
			col->index = index;
			col->index_unique = form->indisunique;
			col->index_natts = form->indnatts;
		}
	}
	systable_endscan(scan);
	table_close(catalog, AccessShareLock);
}


/*
 * scan_pg_statistic
 *		The bounds of the pg_statistic rows of the rows whose statistics the
 *		measurement may read (io_needs_statistics()), in one sequential scan:
 *		the whole tree's row for a parent (partitioned, or with inheritance
 *		children) when there is one, else the table's own, as pg_stats shows
 *		them first.  Looking each column up in the syscache instead filled the
 *		catalog cache with an entry per column (half a kB each, kept to the
 *		end of the session).  Access is checked when the bounds are used
 *		(storagelab_stats_access_known(), the rules of pg_stats).  One
 *		tuple's arrays at a time in a context reset after each.
 */
static void
scan_pg_statistic(IoState *st)
{
	MemoryContext tuplecxt = AllocSetContextCreate(st->scratch,
												   "int_overflow statistics tuple",
												   ALLOCSET_SMALL_SIZES);
	Relation	catalog = table_open(StatisticRelationId, AccessShareLock);
	SysScanDesc scan = systable_beginscan(catalog, InvalidOid, false, NULL, 0, NULL);
	HeapTuple	tup;

	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_statistic form = (Form_pg_statistic) GETSTRUCT(tup);
		IoCol	   *col;
		IoRow	   *row;
		bool		parent;
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		col = column_of(st, form->starelid, form->staattnum);
		if (col == NULL || (row = col->row) == NULL || row->col != col ||
			!io_needs_statistics(row))
			continue;
		parent = col->rel->cls.relkind == RELKIND_PARTITIONED_TABLE ||
			col->rel->cls.relhassubclass;
		/* the tree's row for a parent; the own row unless the tree's is held */
		if (form->stainherit ? !parent : row->stats_inherited)
			continue;
		old = MemoryContextSwitchTo(tuplecxt);
		row->stats_tuple = true;
		row->stats_inherited = form->stainherit;
		row->stats_found = storagelab_stats_tuple_bounds(tup, &row->stats_min,
														 &row->stats_max);
		MemoryContextSwitchTo(old);
		MemoryContextReset(tuplecxt);
	}
	systable_endscan(scan);
	table_close(catalog, AccessShareLock);
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
 * storagelab_int_overflow_rows
 *		Read the catalogs and return the reported rows, sorted by relation
 *		OID and column number; *nrows is set to their number.
 */
IoRow **
storagelab_int_overflow_rows(long *nrows, uint64 *read_at)
{
	IoState		st;
	MemoryContext keep = CurrentMemoryContext;

	memset(&st, 0, sizeof(st));
	st.keep = keep;
	st.scratch = AllocSetContextCreate(keep, "int_overflow walk lookups",
									   ALLOCSET_DEFAULT_SIZES);
	/* kept: the rows point into these (the namespace names) */
	st.nsps = make_hash("int_overflow namespaces", sizeof(Oid), sizeof(IoNsp), 64, keep);
	/* freed before returning (the entries, in the walk's storage, are kept) */
	st.rels = iooid_create(st.scratch, 1024, NULL);
	st.btrees = iooid_create(st.scratch, 1024, NULL);
	st.seqs = iooid_create(st.scratch, 1024, NULL);
	st.parents = make_hash("int_overflow parents", sizeof(Oid), sizeof(IoParents), 64,
						   st.scratch);
	st.parentset = make_hash("int_overflow parent set", sizeof(Oid), sizeof(Oid), 64,
							 st.scratch);
	st.rootatts = make_hash("int_overflow root columns",
							offsetof(IoRootAtt, attnum), sizeof(IoRootAtt), 64,
							st.scratch);
	st.types = make_hash("int_overflow types", sizeof(Oid), sizeof(IoType), 64, st.scratch);
	st.attrdefs = make_hash("int_overflow defaults", sizeof(Oid), sizeof(IoAttrDef), 1024,
							st.scratch);
	st.wanted = make_hash("int_overflow bigint columns", sizeof(IoKey), sizeof(IoKey), 1024,
						  st.scratch);
	st.colv_size = 4096;
	st.colv = MemoryContextAlloc(st.scratch, sizeof(IoCol *) * st.colv_size);
	st.rows_size = 1024;
	st.rows = palloc(sizeof(IoRow *) * st.rows_size);

	/* Order matters: each scan joins against what the earlier ones found. */
	scan_pg_class(&st);
	scan_pg_inherits(&st);
	scan_pg_sequence(&st);
	scan_pg_attrdef(&st);
	scan_pg_depend(&st);
	/* no longer looked up: their room serves the columns and rows */
	iooid_destroy(st.seqs);
	st.seqs = NULL;
	hash_destroy(st.attrdefs);
	st.attrdefs = NULL;
	scan_pg_constraint(&st);
	scan_pg_attribute(&st);
	assign_rows(&st);
	apply_links(&st);
	apply_foreign_keys(&st);
	scan_pg_index(&st);
	scan_pg_statistic(&st);

	MemoryContextDelete(st.scratch);
	qsort(st.rows, st.nrows, sizeof(IoRow *), row_cmp);
	*nrows = st.nrows;
	*read_at = st.read_at;
	return st.rows;
}
