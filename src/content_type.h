/*-------------------------------------------------------------------------
 *
 * content_type.h
 *	  Content-type sniffing by magic bytes, and prefix entropy
 *	  (src/content_type.c), used by toast_profile.c.
 *
 *-------------------------------------------------------------------------
 */
#ifndef STORAGELAB_CONTENT_TYPE_H
#define STORAGELAB_CONTENT_TYPE_H

/* How many leading bytes of a value the sniffer looks at. */
#define SL_SNIFF_PREFIX		1024

/*
 * A prefix this long or longer with at least SL_HIGH_ENTROPY_BITS bits per
 * byte and no known signature is classified "high_entropy".
 */
#define SL_HIGH_ENTROPY_MIN_LEN	512
#define SL_HIGH_ENTROPY_BITS	7.2

/* Prefixes shorter than this are left out of the mean prefix entropy. */
#define SL_ENTROPY_MIN_LEN		64

typedef enum SlContentType
{
	SL_CT_EMPTY = 0,
	SL_CT_JPEG,
	SL_CT_PNG,
	SL_CT_GIF,
	SL_CT_WEBP,
	SL_CT_GZIP,
	SL_CT_ZSTD,
	SL_CT_XZ,
	SL_CT_BZIP2,
	SL_CT_LZ4,
	SL_CT_ZIP,
	SL_CT_7Z,
	SL_CT_PDF,
	SL_CT_MP4,
	SL_CT_MOV,
	SL_CT_MP3,
	SL_CT_OGG,
	SL_CT_HIGH_ENTROPY,
	SL_CT_TEXT,
	SL_CT_OTHER,
	SL_CT_NUM_TYPES
} SlContentType;

extern SlContentType storagelab_sniff_prefix(const unsigned char *buf, int len,
											 double *entropy);
extern const char *storagelab_content_type_name(SlContentType type);
extern bool storagelab_content_type_incompressible(SlContentType type);

#endif							/* STORAGELAB_CONTENT_TYPE_H */
