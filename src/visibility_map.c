/*-------------------------------------------------------------------------
 *
 * visibility_map.c
 *	  Visibility-map counts of one relation, for the storagelab.visibility
 *	  view.
 *
 * Backs storagelab_internal.visibility_map_count(relation regclass).  Reads only the
 * relation's visibility-map fork (one VM page covers 32,672 heap pages), never
 * a heap page, and never waits for a lock: the view runs over every table of
 * a database and must not queue behind an ACCESS EXCLUSIVE lock.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/visibilitymap.h"
#include "catalog/pg_authid_d.h"
#include "catalog/pg_class.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/smgr.h"
#include "utils/acl.h"
#include "utils/rel.h"

#include "compat.h"
#include "storagelab.h"

PG_FUNCTION_INFO_V1(storagelab_visibility_map_count);

/* pages, all_visible_pages, all_frozen_pages */
static const Oid vm_result_types[] = {INT8OID, INT8OID, INT8OID};

/* Bytes of heap-block bits on a visibility-map page (visibilitymap.c). */
#define VM_MAPSIZE (BLCKSZ - MAXALIGN(SizeOfPageHeaderData))

/* Two bits per heap block: all-visible is the low, all-frozen the high. */
#define VM_VISIBLE_MASK64 UINT64CONST(0x5555555555555555)
#define VM_FROZEN_MASK64 UINT64CONST(0xaaaaaaaaaaaaaaaa)

/*
 * count_map_pages
 *		The all-visible and all-frozen bits of the heap blocks 0 .. nblocks - 1
 *		in a visibility map of nmap pages, read by relfilenode: what
 *		visibilitymap_count() counts (it reads whole map pages, whose bits
 *		beyond the heap's end are zero), without the relation cache entry it
 *		needs, and only as far as the heap goes (one word of the first map
 *		page for a small table).  A page never initialised counts as zeros;
 *		nothing is written.
 */
static void
count_map_pages(RelFileLocator locator, bool permanent, BlockNumber nmap,
				BlockNumber nblocks,
				BlockNumber *all_visible, BlockNumber *all_frozen)
{
	const uint64 blocks_per_page = (uint64) VM_MAPSIZE * 4;
	BlockNumber blkno;

	StaticAssertStmt(VM_MAPSIZE % sizeof(uint64) == 0,
					 "unsupported block size");
	for (blkno = 0; blkno < nmap && (uint64) blkno * blocks_per_page < nblocks; blkno++)
	{
		uint64		heap_blocks = Min((uint64) nblocks - (uint64) blkno * blocks_per_page,
									  blocks_per_page);
		/* two bits per heap block: 32 heap blocks per word */
		int			nwords = (int) ((heap_blocks + 31) / 32);
		Buffer		buf;
		Page		page;

		CHECK_FOR_INTERRUPTS();
		buf = ReadBufferWithoutRelcache(locator, VISIBILITYMAP_FORKNUM, blkno,
										RBM_ZERO_ON_ERROR, NULL, permanent);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (!PageIsNew(page))
		{
			uint64	   *map = (uint64 *) PageGetContents(page);
			int			i;

			for (i = 0; i < nwords; i++)
			{
				*all_visible += pg_popcount64(map[i] & VM_VISIBLE_MASK64);
				*all_frozen += pg_popcount64(map[i] & VM_FROZEN_MASK64);
			}
		}
		UnlockReleaseBuffer(buf);
	}
}

/*
 * storagelab_visibility_map_count
 *		visibility_map_count(relation regclass,
 *							 OUT pages bigint,
 *							 OUT all_visible_pages bigint,
 *							 OUT all_frozen_pages bigint)
 *
 * The relation's size in pages and the counts pg_visibility_map_summary()
 * gives, read without waiting (pg_relation_size() would wait): when
 * the relation is locked in a conflicting mode (or dropped meanwhile), or
 * is not a heap table, materialized view or TOAST table with storage, or is
 * another session's temporary table, or an unlogged relation on a standby,
 * the result is NULL.  The caller needs the privileges of
 * pg_stat_scan_tables, and SELECT on the relation or the privileges of
 * pg_read_all_stats (42501 otherwise).  The checks, and the lock taken
 * only if it is free at once, are relation.c's no-wait mode.
 *
 * The view calls this for every table of the database, so the relation is
 * not opened: its size and its visibility map are read through the storage
 * manager and the buffer manager by relfilenode, from the pg_class row read
 * after the lock.  Building a relation cache entry per table cost about as
 * much as the rest of the view on the first call in a session, and kept a
 * few kB per table for the rest of it.  Mapped catalogs (no relfilenode in
 * pg_class) and the session's own temporary tables (local buffers) are
 * opened as before.
 */
Datum
storagelab_visibility_map_count(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};
	BlockNumber nblocks;
	BlockNumber all_visible = 0;
	BlockNumber all_frozen = 0;
	SlOpenStatus status;
	SlRelFacts	facts;
	int			flags = SL_ALLOW_TABLE | SL_ALLOW_MATVIEW | SL_ALLOW_TOAST |
		SL_NOWAIT | SL_SKIP_UNREADABLE;

	tupdesc = SL_RESULT_DESC(fcinfo, vm_result_types, "visibility_map_count");

	/*
	 * Visibility-map counts are statistics, as pg_class.relallvisible is: a
	 * member of pg_read_all_stats reads them for every table.
	 */
	if (has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS))
		flags |= SL_PRIVILEGE_CHECKED;
	if (!storagelab_lock_heap_relation(relid, flags, "visibility", &status, &facts))
		PG_RETURN_NULL();

	if (facts.relpersistence == RELPERSISTENCE_TEMP ||
		!OidIsValid(facts.relfilenode))
	{
		Relation	rel = relation_open(relid, NoLock);

		nblocks = RelationGetNumberOfBlocks(rel);
		if (nblocks > 0)
			visibilitymap_count(rel, &all_visible, &all_frozen);
		relation_close(rel, NoLock);
	}
	else
	{
		RelFileLocator locator;
		SMgrRelation smgr;

		storagelab_set_rel_file_locator(locator,
										OidIsValid(facts.reltablespace) ?
										facts.reltablespace : MyDatabaseTableSpace,
										MyDatabaseId, facts.relfilenode);
		smgr = storagelab_smgropen_shared(locator);
		nblocks = smgrnblocks(smgr, MAIN_FORKNUM);
		if (nblocks > 0 && smgrexists(smgr, VISIBILITYMAP_FORKNUM))
			count_map_pages(locator,
							facts.relpersistence == RELPERSISTENCE_PERMANENT,
							smgrnblocks(smgr, VISIBILITYMAP_FORKNUM), nblocks,
							&all_visible, &all_frozen);
		/* Release its files now, not at the end of the transaction. */
		smgrclose(smgr);
	}
	UnlockRelationOid(relid, AccessShareLock);

	values[0] = Int64GetDatum((int64) nblocks);
	values[1] = Int64GetDatum((int64) all_visible);
	values[2] = Int64GetDatum((int64) all_frozen);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
