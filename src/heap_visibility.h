/*-------------------------------------------------------------------------
 *
 * heap_visibility.h
 *	  Declarations shared by heap_visibility.c (the SQL functions, which
 *	  relations to read, advice), visibility_page.c (classifying one heap
 *	  page without changing it) and visibility_estimate.c (scaling a page
 *	  sample to the whole relation).
 *
 *-------------------------------------------------------------------------
 */
#ifndef STORAGELAB_HEAP_VISIBILITY_H
#define STORAGELAB_HEAP_VISIBILITY_H

#include "access/transam.h"
#include "storage/block.h"
#include "storage/buf.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

/*
 * Per-page figures of heap_visibility().  Each is a count on one page; the
 * relation's figure is the sum over its pages, or, for a sample, an
 * estimate of that sum with a confidence interval.  The order is the order
 * of the result columns.
 */
typedef enum HvFigure
{
	HV_PD_ALL_VISIBLE_MISMATCHES,
	HV_TUPLES,
	HV_XMIN_FROZEN,
	HV_XMIN_COMMITTED,
	HV_XMIN_INVALID,
	HV_XMIN_UNHINTED,
	HV_XMAX_COMMITTED,
	HV_XMAX_INVALID,
	HV_DELETED_TUPLES,
	HV_DEAD_ITEMS,
	HV_REDIRECT_ITEMS,
	HV_UNUSED_ITEMS,
	HV_HINT_DEBT_TUPLES,
	HV_HINT_DEBT_PAGES,
	HV_HINT_DEBT_WAL_BYTES,
	HV_NUM_FIGURES
} HvFigure;

/* Column names of the figures, in HvFigure order. */
extern const char *const storagelab_hv_figure_names[HV_NUM_FIGURES];

/*
 * Running sums over the pages read from one relation (one stratum of the
 * sample: a partitioned table is sampled leaf by leaf).
 */
typedef struct HvStratum
{
	BlockNumber pages;			/* pages in the relation */
	BlockNumber scanned;		/* pages read */
	double		sum[HV_NUM_FIGURES];
	double		sumsq[HV_NUM_FIGURES];
	double		max[HV_NUM_FIGURES];	/* largest value on a page read */
	double		max_items;		/* most line pointers on a page read */
} HvStratum;

/* The estimate of every figure over all strata. */
typedef struct HvEstimate
{
	bool		exact;			/* every page of every stratum was read */
	uint64		pages;
	uint64		scanned;
	double		total[HV_NUM_FIGURES];	/* estimated (or exact) sum */
	double		variance[HV_NUM_FIGURES];	/* of the estimated sum */
	double		observed[HV_NUM_FIGURES];	/* sum over the pages read */
	double		observed_max_pages[HV_NUM_FIGURES];	/* upper bound of a
														 * page count */
} HvEstimate;

/* What a reader would learn about a transaction now. */
typedef enum HvXidStatus
{
	HV_XID_UNKNOWN,				/* out of the range clog can answer for */
	HV_XID_IN_PROGRESS,			/* running, or the caller's own */
	HV_XID_COMMITTED,
	HV_XID_ABORTED				/* aborted or crashed */
} HvXidStatus;

/* State of one heap_visibility() call. */
typedef struct HvScan
{
	/* for the whole call */
	BufferAccessStrategy strategy;
	MemoryContext pagecxt;		/* reset after every page */
	bool		in_recovery;	/* scans then check every tuple, never prune */
	bool		hints_dirty;	/* a hint bit dirties the buffer */
	bool		hints_logged;	/* ... and logs a full-page image */
	XLogRecPtr	redo;			/* redo pointer of the last checkpoint */
	TransactionId next_xid;
	TransactionId oldest_unfrozen;	/* oldest xid still to freeze */
	uint64		all_visible_pages;
	uint64		all_frozen_pages;
	HvEstimate	est;

	/* for the relation being read */
	Relation	rel;
	bool		permanent;
	TransactionId relfrozenxid;
	GlobalVisState *vistest;
	Size		prune_minfree;
	Buffer		vmbuffer;
	BlockNumber vm_debt_block;	/* last map page counted in hint_debt_pages */
	bool		fsm_exists;		/* the relation has a free space map */
	BlockNumber fsm_debt_leaf;	/* last FSM leaf counted in hint_debt_pages */
	TransactionId cached_xid;
	HvXidStatus cached_status;
} HvScan;

/* visibility_page.c */
extern void storagelab_hv_read_page(HvScan *scan, Buffer buffer, HvStratum *stratum);

/* visibility_estimate.c */
extern void storagelab_hv_stratum_add_page(HvStratum *stratum,
										   const double *figures, int items);
extern void storagelab_hv_estimate_init(HvEstimate *est);
extern void storagelab_hv_estimate_add_stratum(HvEstimate *est, const HvStratum *stratum);
extern void storagelab_hv_estimate_interval(const HvEstimate *est, HvFigure f,
											int64 *low, int64 *high);
extern int	storagelab_hv_sample_allocation(BlockNumber stratum_pages,
											uint64 total_pages, int sample_pages);

#endif							/* STORAGELAB_HEAP_VISIBILITY_H */
