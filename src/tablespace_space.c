/*-------------------------------------------------------------------------
 *
 * tablespace_space.c
 *	  Free and total bytes of the filesystem that holds a tablespace, read
 *	  with statvfs(): what the disk pre-flight of the migration scripts
 *	  compares the space a rewrite needs with (extension/68_disk_preflight.sql).
 *
 * The directory asked about is the one PostgreSQL writes the tablespace's
 * files to: the data directory's base/ for pg_default, global/ for
 * pg_global, and for any other tablespace pg_tblspc/<OID>/<version
 * directory>, through the symbolic link CREATE TABLESPACE made (statvfs()
 * follows it; an in-place tablespace is a directory there).  Nothing is
 * written.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/statvfs.h>

#include "catalog/catalog.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_tablespace.h"
#include "commands/tablespace.h"
#include "common/relpath.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/syscache.h"

#include "compat.h"
#include "storagelab.h"

PG_FUNCTION_INFO_V1(storagelab_tablespace_space);

/* spc oid */
static const Oid space_arg_types[] = {OIDOID};

/* free_bytes, total_bytes */
static const Oid space_result_types[] = {INT8OID, INT8OID};

/*
 * storagelab_tablespace_space
 *		tablespace_space(spc oid, OUT free_bytes bigint, OUT total_bytes bigint)
 *
 * free_bytes: what an unprivileged process may still write on the
 * filesystem of the tablespace (f_bavail blocks: the server does not run as
 * root, so the blocks reserved for root are not its); total_bytes: the
 * filesystem's size.  The privileges are those of pg_tablespace_size():
 * the privileges of pg_read_all_stats, or CREATE on the tablespace (held
 * implicitly on the current database's default one); 42501 otherwise.  A
 * tablespace that does not exist is 42704; a directory that cannot be read
 * is an error of its file-access class.
 */
Datum
storagelab_tablespace_space(PG_FUNCTION_ARGS)
{
	Oid			spc;
	char		path[MAXPGPATH];
	struct statvfs st;
	TupleDesc	tupdesc;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	SL_CHECK_ARGS(fcinfo, space_arg_types, "tablespace_space");
	tupdesc = SL_RESULT_DESC(fcinfo, space_result_types, "tablespace_space");
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("tablespace_space() needs a tablespace OID"),
				 errhint("Pass the oid of a row of pg_tablespace.")));
	spc = PG_GETARG_OID(0);

	if (!SearchSysCacheExists1(TABLESPACEOID, ObjectIdGetDatum(spc)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("tablespace with OID %u does not exist", spc),
				 errhint("Pass the oid of a row of pg_tablespace.")));

	/* pg_tablespace_size()'s rule (dbsize.c) */
	if (spc != MyDatabaseTableSpace &&
		!has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS) &&
		object_aclcheck(TableSpaceRelationId, spc, GetUserId(),
						ACL_CREATE) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to read the free space of tablespace %s",
						get_tablespace_name(spc)),
				 errhint("Run it as a role with the privileges of pg_read_all_stats, or with CREATE on the tablespace.")));

	if (spc == DEFAULTTABLESPACE_OID)
		snprintf(path, sizeof(path), "%s/base", DataDir);
	else if (spc == GLOBALTABLESPACE_OID)
		snprintf(path, sizeof(path), "%s/global", DataDir);
	else
		snprintf(path, sizeof(path), "%s/pg_tblspc/%u/%s", DataDir, spc,
				 TABLESPACE_VERSION_DIRECTORY);

	if (statvfs(path, &st) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read the free space of tablespace %s at \"%s\": %m",
						get_tablespace_name(spc), path),
				 errhint("Check that the tablespace's directory exists and that the server's operating-system user may read it.")));

	values[0] = Int64GetDatum((int64) st.f_bavail * (int64) st.f_frsize);
	values[1] = Int64GetDatum((int64) st.f_blocks * (int64) st.f_frsize);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
