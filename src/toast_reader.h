/*-------------------------------------------------------------------------
 *
 * toast_reader.h
 *	  Reading the first chunk of TOAST values (src/toast_reader.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef STORAGELAB_TOAST_READER_H
#define STORAGELAB_TOAST_READER_H

#include "storage/bufmgr.h"
#include "utils/rel.h"
#include "utils/snapshot.h"

typedef struct ToastReader ToastReader;

extern ToastReader *storagelab_toast_reader_open(Relation rel, Snapshot snapshot,
												 BufferAccessStrategy strategy);
extern const char *storagelab_toast_first_chunk(ToastReader *reader,
												struct varatt_external *toast_pointer,
												int *len);
extern void storagelab_toast_chunk_done(ToastReader *reader);
extern const char *storagelab_toast_reader_relname(ToastReader *reader);
extern Oid	storagelab_toast_reader_relid(ToastReader *reader);
extern void storagelab_toast_reader_close(ToastReader *reader);

#endif							/* STORAGELAB_TOAST_READER_H */
