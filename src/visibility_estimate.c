/*-------------------------------------------------------------------------
 *
 * visibility_estimate.c
 *	  Scaling heap_visibility()'s page sample to the whole relation.
 *
 * heap_visibility(rel, sample_pages) reads a simple random sample of pages
 * without replacement (BlockSampler, fixed seed) from each relation it
 * covers.  Every figure is a sum of per-page counts, so its estimate is the
 * classic expansion estimator N * mean, with variance
 * N^2 * (1 - n/N) * s^2 / n (finite population correction).  A partitioned
 * table is a stratified sample: one stratum per leaf partition, the sample
 * allocated in proportion to the leaves' sizes, estimates and variances
 * added up.  The 95% interval is estimate +/- 1.96 standard errors, clipped
 * to what the pages read already prove (a count is never below what was
 * seen, a page count never above the pages not seen plus those seen with
 * the property).
 *
 * Two guards keep the interval honest where the normal approximation is
 * not: heap_visibility.c reads a relation's last page, usually the only
 * partly filled one, outside the sample (exactly); and when every sampled
 * page shows the same value (zero sample variance), the interval is at
 * least as wide as the "rule of three" allows: up to 3/n of the pages not
 * read may differ, each by as much as a page can hold.
 *
 * Nothing here reads a page; heap_visibility.c feeds the per-page counts.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "utils/float.h"

#include "heap_visibility.h"

/* Normal quantile for a two-sided 95% interval. */
#define HV_Z95	1.959963984540054

const char *const storagelab_hv_figure_names[HV_NUM_FIGURES] = {
	"pd_all_visible_mismatches",
	"tuples",
	"xmin_frozen",
	"xmin_committed",
	"xmin_invalid",
	"xmin_unhinted",
	"xmax_committed",
	"xmax_invalid",
	"deleted_tuples",
	"dead_items",
	"redirect_items",
	"unused_items",
	"hint_debt_tuples",
	"hint_debt_pages",
	"hint_debt_wal_bytes"
};

/*
 * hv_is_page_count
 *		Whether figure f counts pages (0 or 1 per page), so that its total is
 *		bounded by the number of pages.
 */
static bool
hv_is_page_count(HvFigure f)
{
	return f == HV_PD_ALL_VISIBLE_MISMATCHES || f == HV_HINT_DEBT_PAGES;
}

/*
 * storagelab_hv_stratum_add_page
 *		Add the counts of one page read (figures[HV_NUM_FIGURES]) to stratum.
 */
void
storagelab_hv_stratum_add_page(HvStratum *stratum, const double *figures, int items)
{
	int			f;

	for (f = 0; f < HV_NUM_FIGURES; f++)
	{
		stratum->sum[f] += figures[f];
		stratum->sumsq[f] += figures[f] * figures[f];
		if (figures[f] > stratum->max[f])
			stratum->max[f] = figures[f];
	}
	if (items > stratum->max_items)
		stratum->max_items = items;
	stratum->scanned++;
}

/*
 * hv_page_scale
 *		How much figure f can differ between two pages of the stratum, for
 *		the zero-variance guard: 1 for page counts, the largest WAL image
 *		for WAL bytes, the most line pointers on a page for item counts.
 */
static double
hv_page_scale(const HvStratum *stratum, HvFigure f)
{
	if (hv_is_page_count(f))
		return 1.0;
	if (f == HV_HINT_DEBT_WAL_BYTES)
		return Max(stratum->max[f], (double) BLCKSZ);
	return Max(Max(stratum->max[f], stratum->max_items), 1.0);
}

/*
 * storagelab_hv_estimate_init
 *		Start an estimate with no strata.
 */
void
storagelab_hv_estimate_init(HvEstimate *est)
{
	memset(est, 0, sizeof(HvEstimate));
	est->exact = true;
}

/*
 * storagelab_hv_estimate_add_stratum
 *		Add one relation's sample (or full scan) to the estimate.
 */
void
storagelab_hv_estimate_add_stratum(HvEstimate *est, const HvStratum *stratum)
{
	double		N = stratum->pages;
	double		n = stratum->scanned;
	int			f;

	est->pages += stratum->pages;
	est->scanned += stratum->scanned;
	if (stratum->scanned < stratum->pages)
		est->exact = false;

	for (f = 0; f < HV_NUM_FIGURES; f++)
	{
		double		sum = stratum->sum[f];

		est->observed[f] += sum;
		if (hv_is_page_count((HvFigure) f))
			est->observed_max_pages[f] += (N - n) + sum;

		if (n <= 0)
			continue;			/* an empty relation adds nothing */
		if (n >= N)
		{
			est->total[f] += sum;	/* read in full: exact */
			continue;
		}

		est->total[f] += N * sum / n;
		if (n > 1)
		{
			double		mean = sum / n;
			double		s2 = (stratum->sumsq[f] - n * mean * mean) / (n - 1);

			double		var;

			if (s2 < 0)
				s2 = 0;			/* rounding */
			var = N * N * (1.0 - n / N) * s2 / n;
			if (s2 == 0)
			{
				/* rule of three: 3/n of the unread pages may differ */
				double		half = (N - n) * Min(1.0, 3.0 / n) *
					hv_page_scale(stratum, (HvFigure) f);

				var = Max(var, (half / HV_Z95) * (half / HV_Z95));
			}
			est->variance[f] += var;
		}
		else
		{
			/*
			 * One page out of several says nothing about the spread: make
			 * the interval as wide as the figure can be.
			 */
			est->variance[f] += get_float8_infinity();
		}
	}
}

/*
 * storagelab_hv_estimate_interval
 *		The 95% confidence interval of figure f, as whole numbers.
 */
void
storagelab_hv_estimate_interval(const HvEstimate *est, HvFigure f, int64 *low,
								int64 *high)
{
	double		half = HV_Z95 * sqrt(est->variance[f]);
	double		lo = est->total[f] - half;
	double		hi = est->total[f] + half;

	if (lo < est->observed[f])
		lo = est->observed[f];
	if (hv_is_page_count(f) && hi > est->observed_max_pages[f])
		hi = est->observed_max_pages[f];
	if (hi > (double) PG_INT64_MAX)
		hi = (double) PG_INT64_MAX;
	if (hi < lo)
		hi = lo;
	*low = (int64) floor(lo);
	*high = (int64) ceil(hi);
}

/*
 * storagelab_hv_sample_allocation
 *		How many of sample_pages to read from a relation of stratum_pages
 *		pages, when all strata together have total_pages pages: proportional
 *		allocation, rounded up, at least three pages (the last page, read
 *		exactly, and two for the stratum's variance), at most the whole
 *		relation.
 */
int
storagelab_hv_sample_allocation(BlockNumber stratum_pages, uint64 total_pages,
								int sample_pages)
{
	double		share;
	int			n;

	if (stratum_pages == 0 || total_pages == 0)
		return 0;
	share = (double) sample_pages * (double) stratum_pages / (double) total_pages;
	n = (int) Min(ceil(share), (double) PG_INT32_MAX);
	if (n < 3)
		n = 3;
	if ((BlockNumber) n > stratum_pages)
		n = (int) stratum_pages;
	return n;
}
