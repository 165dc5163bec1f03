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

PG_MODULE_MAGIC;
