/*-------------------------------------------------------------------------
 *
 * read_stream_compat.c
 *	  Read streams for PostgreSQL versions that lack them (see compat.h).
 *
 * storagelab's page readers are written against PostgreSQL 17's read stream
 * API (storage/read_stream.h).  On 15 and 16 this file supplies a minimal
 * stand-in: the same calls, reading one block per read_stream_next_buffer()
 * with ReadBufferExtended() in the caller's buffer access strategy, without
 * read-ahead.  Before 18 it also supplies block_range_read_stream_cb.  From
 * 18 on the file compiles to nothing.  Which parts are compiled compat.h
 * decides (SL_READ_STREAM_STAND_IN, SL_BLOCK_RANGE_CB_STAND_IN), the one
 * place that tests PG_VERSION_NUM.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "compat.h"

#ifdef SL_BLOCK_RANGE_CB_STAND_IN

/*
 * block_range_read_stream_cb
 *		Read stream callback returning the blocks current_blocknum ..
 *		last_exclusive - 1 of a BlockRangeReadStreamPrivate, in order.
 */
BlockNumber
block_range_read_stream_cb(ReadStream *stream,
						   void *callback_private_data,
						   void *per_buffer_data)
{
	BlockRangeReadStreamPrivate *p = callback_private_data;

	if (p->current_blocknum < p->last_exclusive)
		return p->current_blocknum++;

	return InvalidBlockNumber;
}

#endif							/* SL_BLOCK_RANGE_CB_STAND_IN */

#ifdef SL_READ_STREAM_STAND_IN

/* The stand-in's state: what read_stream_begin_relation() was given. */
struct ReadStream
{
	Relation	rel;
	ForkNumber	forknum;
	BufferAccessStrategy strategy;
	ReadStreamBlockNumberCB callback;
	void	   *callback_private_data;
	void	   *per_buffer_data;	/* per_buffer_data_size bytes, or NULL */
	bool		exhausted;		/* the callback has returned
								 * InvalidBlockNumber */
};

/*
 * read_stream_begin_relation
 *		Start reading the blocks of rel's fork forknum that callback returns,
 *		through strategy.  flags (read-ahead hints) have nothing to tune here.
 */
ReadStream *
read_stream_begin_relation(int flags,
						   BufferAccessStrategy strategy,
						   Relation rel,
						   ForkNumber forknum,
						   ReadStreamBlockNumberCB callback,
						   void *callback_private_data,
						   size_t per_buffer_data_size)
{
	ReadStream *stream = palloc0(sizeof(ReadStream));

	stream->rel = rel;
	stream->forknum = forknum;
	stream->strategy = strategy;
	stream->callback = callback;
	stream->callback_private_data = callback_private_data;
	if (per_buffer_data_size > 0)
		stream->per_buffer_data = palloc0(per_buffer_data_size);

	return stream;
}

/*
 * read_stream_next_buffer
 *		The next block the callback names, pinned (not locked), or
 *		InvalidBuffer once the callback has returned InvalidBlockNumber.
 */
Buffer
read_stream_next_buffer(ReadStream *stream, void **per_buffer_data)
{
	BlockNumber blkno;

	if (per_buffer_data)
		*per_buffer_data = NULL;
	if (stream->exhausted)
		return InvalidBuffer;

	blkno = stream->callback(stream, stream->callback_private_data,
							 stream->per_buffer_data);
	if (blkno == InvalidBlockNumber)
	{
		stream->exhausted = true;
		return InvalidBuffer;
	}

	if (per_buffer_data)
		*per_buffer_data = stream->per_buffer_data;

	return ReadBufferExtended(stream->rel, stream->forknum, blkno,
							  RBM_NORMAL, stream->strategy);
}

/*
 * read_stream_reset
 *		Make an exhausted stream ask its callback for blocks again.
 */
void
read_stream_reset(ReadStream *stream)
{
	stream->exhausted = false;
}

/*
 * read_stream_end
 *		Free the stream.  No buffer is pinned ahead, so none is released.
 */
void
read_stream_end(ReadStream *stream)
{
	if (stream->per_buffer_data)
		pfree(stream->per_buffer_data);
	pfree(stream);
}

#endif							/* SL_READ_STREAM_STAND_IN */
