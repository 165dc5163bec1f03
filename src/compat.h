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
 * exist from 16 on, so storagelab uses pg_class_aclcheck() everywhere.
 */

/*
 * PostgreSQL 18 added an instrumentation argument to index_beginscan().
 */
#if PG_VERSION_NUM < 180000
#define index_beginscan(heap, index, snapshot, instrument, nkeys, norderbys) \
	index_beginscan(heap, index, snapshot, nkeys, norderbys)
#endif

#endif							/* STORAGELAB_COMPAT_H */
