/*-------------------------------------------------------------------------
 *
 * storagelab.h
 *	  Declarations shared between storagelab's C files.
 *
 *-------------------------------------------------------------------------
 */
#ifndef STORAGELAB_H
#define STORAGELAB_H

#include "utils/rel.h"

/* Relation kinds a page reader may be pointed at (bit flags). */
#define SL_ALLOW_TABLE		0x01	/* ordinary table */
#define SL_ALLOW_MATVIEW	0x02	/* materialized view */
#define SL_ALLOW_TOAST		0x04	/* TOAST table */
#define SL_ALLOW_PARTITIONED 0x08	/* partitioned table (no storage, no AM) */
#define SL_PRIVILEGE_CHECKED 0x10	/* SELECT already checked on the
									 * partitioned parent: skip it here */

/* xid_status.c */
extern bool storagelab_xid_did_commit(TransactionId xid, bool *committed);

/* relation.c */
extern Relation storagelab_open_heap_relation(Oid relid, int allowed_kinds,
											  const char *caller);

#endif							/* STORAGELAB_H */
