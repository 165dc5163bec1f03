/*-------------------------------------------------------------------------
 *
 * result_check.c
 *	  The check every C function makes before it builds a row or reads an
 *	  argument: the SQL declaration calling it (its result columns and its
 *	  arguments) is the one this library was built for.
 *
 * After a package upgrade the new storagelab.so serves the SQL objects of
 * the old version until ALTER EXTENSION storagelab UPDATE runs.  A function
 * whose result type or argument list changed between the versions would
 * then store a text datum where the old result type says bigint, or read an
 * argument the old declaration never passes: a crash or garbage.  Each C
 * function gives the types it builds and reads here; on any difference it
 * fails with SQLSTATE 55000 and says to run the update.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"

#include "storagelab.h"

/*
 * installed_version
 *		extversion of the storagelab extension in this database (NULL when
 *		none): what the SQL objects are.
 */
static char *
installed_version(void)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	char	   *version = NULL;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber,
				F_NAMEEQ, CStringGetDatum("storagelab"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
	{
		bool		isnull;
		Datum		d = heap_getattr(tuple, Anum_pg_extension_extversion,
									 RelationGetDescr(rel), &isnull);

		if (!isnull)
			version = text_to_cstring(DatumGetTextPP(d));
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return version;
}

/*
 * version_older
 *		Whether version a ("1.10") comes before b ("1.2"), part by part.
 */
static bool
version_older(const char *a, const char *b)
{
	while (*a || *b)
	{
		long		x = strtol(a, (char **) &a, 10);
		long		y = strtol(b, (char **) &b, 10);

		if (x != y)
			return x < y;
		if (*a == '.')
			a++;
		if (*b == '.')
			b++;
		if ((*a && !isdigit((unsigned char) *a)) || (*b && !isdigit((unsigned char) *b)))
			return strcmp(a, b) < 0;
	}
	return false;
}

/*
 * mismatch
 *		Raise the error of a library that does not match the SQL objects
 *		calling it; detail says what differs.  Usually the library is newer
 *		(a package upgrade, before ALTER EXTENSION UPDATE); a session that
 *		loaded the library before an upgrade and runs on after ALTER
 *		EXTENSION UPDATE has an older one, and must reconnect.
 */
static void
mismatch(const char *caller, const char *detail)
{
	char	   *sql = installed_version();

	if (sql != NULL && version_older(STORAGELAB_VERSION, sql))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("storagelab's library is older than its SQL objects"),
				 errdetail("%s() %s This session runs the library of version %s; the SQL objects are of version %s.",
						   caller, detail, STORAGELAB_VERSION, sql),
				 errhint("Reconnect: this session loaded the library before the upgrade.")));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("storagelab's library is newer than its SQL objects"),
			 errdetail("%s() %s The library is of version %s; the SQL objects are of version %s.",
					   caller, detail, STORAGELAB_VERSION, sql ? sql : "(none)"),
			 errhint("Run ALTER EXTENSION storagelab UPDATE.")));
}

/*
 * storagelab_check_result_desc
 *		Fail unless desc has exactly ntypes columns, column i of type
 *		types[i] (a dropped column is a mismatch too: the row would be
 *		built without it).
 */
void
storagelab_check_result_desc(TupleDesc desc, const Oid *types, int ntypes,
							 const char *caller)
{
	if (desc == NULL || desc->natts != ntypes)
		mismatch(caller,
				 psprintf("returns %d columns in the installed SQL objects, and the library builds %d.",
						  desc ? desc->natts : 0, ntypes));
	for (int i = 0; i < ntypes; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped || att->atttypid != types[i])
			mismatch(caller,
					 psprintf("returns column %d \"%s\" as %s in the installed SQL objects, and the library builds %s.",
							  i + 1, NameStr(att->attname),
							  att->attisdropped ? "a dropped column" :
							  format_type_be(att->atttypid),
							  format_type_be(types[i])));
	}
}

/*
 * storagelab_result_desc
 *		The result row type of the function being called, checked against
 *		types[]: get_call_result_type() and storagelab_check_result_desc().
 */
TupleDesc
storagelab_result_desc(FunctionCallInfo fcinfo, const Oid *types, int ntypes,
					   const char *caller)
{
	TupleDesc	desc;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		mismatch(caller, "does not return a row type in the installed SQL objects.");
	storagelab_check_result_desc(desc, types, ntypes, caller);
	return desc;
}

/*
 * storagelab_check_args
 *		Fail unless the call passes ntypes arguments, argument i of type
 *		types[i] where the call expression says (a call without one, from C,
 *		is checked by count only).
 */
void
storagelab_check_args(FunctionCallInfo fcinfo, const Oid *types, int ntypes,
					  const char *caller)
{
	if (PG_NARGS() != ntypes)
		mismatch(caller,
				 psprintf("takes %d arguments in the installed SQL objects, and the library reads %d.",
						  PG_NARGS(), ntypes));
	for (int i = 0; i < ntypes; i++)
	{
		Oid			got = get_fn_expr_argtype(fcinfo->flinfo, i);

		if (OidIsValid(got) && got != types[i])
			mismatch(caller,
					 psprintf("takes argument %d as %s in the installed SQL objects, and the library reads %s.",
							  i + 1, format_type_be(got), format_type_be(types[i])));
	}
}
