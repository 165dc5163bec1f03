/*-------------------------------------------------------------------------
 *
 * storagelab.c
 *	  Module entry point of the storagelab extension.
 *
 * The SQL-callable functions live in one file per concern (see the other
 * files in src/); this file only declares the module to the server.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"

#include "compat.h"

/* STORAGELAB_VERSION: the control file's default_version (see Makefile). */
PG_MODULE_MAGIC_EXT(.name = "storagelab",.version = STORAGELAB_VERSION);
