/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  PostgreSQL version differences, in one place.
 *
 * storagelab's code is written against the current PostgreSQL API.  Where an
 * older supported major (15 and later) lacks or names something differently,
 * this header supplies the current name, so that no .c file needs a
 * PG_VERSION_NUM test.
 *
 *-------------------------------------------------------------------------
 */
#ifndef STORAGELAB_COMPAT_H
#define STORAGELAB_COMPAT_H

#if PG_VERSION_NUM < 150000
#error "storagelab requires PostgreSQL 15 or later"
#endif

/*
 * PostgreSQL 17 renamed ShmemVariableCache to TransamVariables.
 */
#if PG_VERSION_NUM < 170000
#define TransamVariables ShmemVariableCache
#endif

/*
 * PostgreSQL 16 added object_aclcheck() and kept pg_class_aclcheck(); both
 * exist from 16 on, so storagelab uses pg_class_aclcheck() for relations.
 * For a tablespace (tablespace_space.c, the only other object checked) 15
 * has pg_tablespace_aclcheck() instead: object_aclcheck() of a tablespace
 * is spelled with it there.
 */
#if PG_VERSION_NUM < 160000
#include "utils/acl.h"
#define object_aclcheck(classid, objectid, roleid, mode) \
	(AssertMacro((classid) == TableSpaceRelationId), \
	 pg_tablespace_aclcheck(objectid, roleid, mode))
#endif

/*
 * PostgreSQL 18 added an IndexScanInstrumentation argument to
 * index_beginscan(), and 19 a flags argument (a bitmask of ScanOptions,
 * SO_NONE for none: see table_beginscan() below); older majors take the
 * others only.  genam.h is included first, so that its declaration is never
 * expanded by the macro.
 */
#include "access/genam.h"
#if PG_VERSION_NUM < 180000
#define index_beginscan(heap, index, snapshot, instrument, nkeys, norderbys, flags) \
	index_beginscan(heap, index, snapshot, nkeys, norderbys)
#elif PG_VERSION_NUM < 190000
#define index_beginscan(heap, index, snapshot, instrument, nkeys, norderbys, flags) \
	index_beginscan(heap, index, snapshot, instrument, nkeys, norderbys)
#endif

/*
 * PostgreSQL 18 added PG_MODULE_MAGIC_EXT, whose name and version
 * pg_get_loaded_modules() reports.  Before 18 it is the plain magic block.
 */
#ifndef PG_MODULE_MAGIC_EXT
#define PG_MODULE_MAGIC_EXT(...) PG_MODULE_MAGIC
#endif

/*
 * PostgreSQL 19 added an allow_update argument to
 * GlobalVisTestIsRemovableXid(): whether it may recompute the horizons when
 * they cannot tell yet (what earlier majors always do, and what
 * heap_page_prune_opt() passes).  snapmgr.h is included first, so that its
 * declaration is never expanded by the macro.
 */
#include "utils/snapmgr.h"
#if PG_VERSION_NUM < 190000
#define GlobalVisTestIsRemovableXid(state, xid, allow_update) \
	GlobalVisTestIsRemovableXid(state, xid)
#endif

/*
 * PostgreSQL 19 widened a buffer header's state word (flags such as
 * BM_DIRTY, usage and pin counts) from a pg_atomic_uint32 to a
 * pg_atomic_uint64.  storagelab_buffer_state(desc) reads it, without the
 * buffer header lock, on every major (needs storage/buf_internals.h).
 */
#if PG_VERSION_NUM >= 190000
#define storagelab_buffer_state(desc) pg_atomic_read_u64(&(desc)->state)
#else
#define storagelab_buffer_state(desc) pg_atomic_read_u32(&(desc)->state)
#endif

/*
 * Read streams.  PostgreSQL 17 added storage/read_stream.h (read-ahead and
 * I/O combining for a relation's blocks); 18 added block_range_read_stream_cb
 * and READ_STREAM_USE_BATCHING.  Page readers use that API on every major:
 * on 15 and 16, src/read_stream_compat.c stands in for it, reading one block
 * per read_stream_next_buffer() call with ReadBufferExtended(), and before 18
 * it supplies block_range_read_stream_cb.  The stand-ins carry storagelab_
 * names in the library, so none can clash with the server's own symbols.
 */
#include "storage/bufmgr.h"
#include "utils/rel.h"

#if PG_VERSION_NUM >= 170000
#include "storage/read_stream.h"
#else
#define SL_READ_STREAM_STAND_IN 1	/* read_stream_compat.c defines them */
#define READ_STREAM_DEFAULT 0x00
#define READ_STREAM_MAINTENANCE 0x01
#define READ_STREAM_SEQUENTIAL 0x02
#define READ_STREAM_FULL 0x04

typedef struct ReadStream ReadStream;
typedef BlockNumber (*ReadStreamBlockNumberCB) (ReadStream *stream,
												void *callback_private_data,
												void *per_buffer_data);

#define read_stream_begin_relation storagelab_read_stream_begin_relation
#define read_stream_next_buffer storagelab_read_stream_next_buffer
#define read_stream_reset storagelab_read_stream_reset
#define read_stream_end storagelab_read_stream_end

extern ReadStream *read_stream_begin_relation(int flags,
											  BufferAccessStrategy strategy,
											  Relation rel,
											  ForkNumber forknum,
											  ReadStreamBlockNumberCB callback,
											  void *callback_private_data,
											  size_t per_buffer_data_size);
extern Buffer read_stream_next_buffer(ReadStream *stream, void **per_buffer_data);
extern void read_stream_reset(ReadStream *stream);
extern void read_stream_end(ReadStream *stream);
#endif

#if PG_VERSION_NUM < 180000
#define SL_BLOCK_RANGE_CB_STAND_IN 1	/* read_stream_compat.c defines it */
#define READ_STREAM_USE_BATCHING 0x00

typedef struct BlockRangeReadStreamPrivate
{
	BlockNumber current_blocknum;
	BlockNumber last_exclusive;
} BlockRangeReadStreamPrivate;

#define block_range_read_stream_cb storagelab_block_range_read_stream_cb
extern BlockNumber block_range_read_stream_cb(ReadStream *stream,
											  void *callback_private_data,
											  void *per_buffer_data);
#endif

/*
 * PostgreSQL 19 added a flags argument (a bitmask of ScanOptions, SO_NONE
 * for none) to table_beginscan(); older majors take the other four only and
 * have no SO_NONE.  tableam.h is included first, so that its declaration is
 * never expanded by the macro.
 */
#include "access/tableam.h"
#if PG_VERSION_NUM < 190000
#define SO_NONE 0
#define table_beginscan(rel, snapshot, nkeys, key, flags) \
	table_beginscan(rel, snapshot, nkeys, key)
#endif

/*
 * PostgreSQL 19's on-access pruning (heap_page_prune_opt()) also sets a
 * page's visibility-map bits when the scan's query does not modify the
 * relation (SO_HINT_REL_READ_ONLY) and the page is all-visible once pruned,
 * so a plain read dirties the visibility-map page too.  Earlier majors leave
 * the map to VACUUM.
 */
#if PG_VERSION_NUM >= 190000
#define STORAGELAB_ON_ACCESS_PRUNE_SETS_VM true
#else
#define STORAGELAB_ON_ACCESS_PRUNE_SETS_VM false
#endif

/*
 * PostgreSQL 16 renamed RelFileNode (spcNode, dbNode, relNode) to
 * RelFileLocator (spcOid, dbOid, relNumber), the argument of
 * ReadBufferWithoutRelcache().  storagelab_set_rel_file_locator(loc, spc,
 * db, relfilenode) fills one on every major (bufmgr.h is included above).
 */
#if PG_VERSION_NUM < 160000
typedef RelFileNode RelFileLocator;
#define storagelab_set_rel_file_locator(loc, spc, db, relfilenode) \
	((loc).spcNode = (spc), (loc).dbNode = (db), (loc).relNode = (relfilenode))
#else
#define storagelab_set_rel_file_locator(loc, spc, db, relfilenode) \
	((loc).spcOid = (spc), (loc).dbOid = (db), (loc).relNumber = (relfilenode))
#endif

/*
 * PostgreSQL 17 replaced BackendId by ProcNumber: smgropen()'s second
 * argument, INVALID_PROC_NUMBER for a relation in shared buffers, was
 * InvalidBackendId.  storagelab_smgropen_shared(locator) opens such a
 * relation's files on every major.
 */
#include "storage/smgr.h"
#if PG_VERSION_NUM < 170000
#define storagelab_smgropen_shared(locator) smgropen(locator, InvalidBackendId)
#else
#define storagelab_smgropen_shared(locator) smgropen(locator, INVALID_PROC_NUMBER)
#endif

#endif							/* STORAGELAB_COMPAT_H */
