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

/* relation.c */
extern Relation storagelab_open_heap_relation(Oid relid, int allowed_kinds,
											  const char *caller);

#endif							/* STORAGELAB_H */
