/*-------------------------------------------------------------------------
 *
 * content_type.c
 *	  Guessing what a binary value holds from its first bytes.
 *
 * toast_profile() (src/toast_profile.c) hands this file the first
 * SL_SNIFF_PREFIX bytes of each value.  Two things come back: a content type
 * recognised by its magic bytes (the formats that are already compressed --
 * images, archives, audio/video -- plus PDF), and the Shannon entropy of the
 * prefix in bits per byte, which flags content that has no signature but is
 * just as incompressible (encrypted data, brotli streams, random keys).
 *
 * Everything here is pure computation on a buffer: no catalog access, no
 * allocation.  toast_profile() calls storagelab_sniff_prefix() once per
 * value, so it is written for speed: one pass over the prefix builds a byte
 * histogram, from which come both the entropy (integer arithmetic on a
 * table of c * log2(c)) and, for ASCII content, the text test.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "content_type.h"

static double prefix_entropy(const unsigned char *buf, int len, uint16 *counts);

/* Names as they appear in toast_profile()'s content_types jsonb. */
static const char *const content_type_names[SL_CT_NUM_TYPES] = {
	[SL_CT_EMPTY] = "empty",
	[SL_CT_JPEG] = "jpeg",
	[SL_CT_PNG] = "png",
	[SL_CT_GIF] = "gif",
	[SL_CT_WEBP] = "webp",
	[SL_CT_GZIP] = "gzip",
	[SL_CT_ZSTD] = "zstd",
	[SL_CT_XZ] = "xz",
	[SL_CT_BZIP2] = "bzip2",
	[SL_CT_LZ4] = "lz4",
	[SL_CT_ZIP] = "zip",
	[SL_CT_7Z] = "7z",
	[SL_CT_PDF] = "pdf",
	[SL_CT_MP4] = "mp4",
	[SL_CT_MOV] = "mov",
	[SL_CT_MP3] = "mp3",
	[SL_CT_OGG] = "ogg",
	[SL_CT_HIGH_ENTROPY] = "high_entropy",
	[SL_CT_TEXT] = "text",
	[SL_CT_OTHER] = "other",
};

/*
 * has_magic
 *		Whether buf (len bytes) holds the len_magic bytes of magic at offset.
 */
static bool
has_magic(const unsigned char *buf, int len, int offset,
		  const char *magic, int len_magic)
{
	return len >= offset + len_magic &&
		memcmp(buf + offset, magic, len_magic) == 0;
}

/*
 * looks_like_mp3_frame
 *		Whether the first four bytes are an MPEG audio layer III frame header:
 *		11 sync bits, a valid version, layer III, a valid bitrate and sample
 *		rate.  (AAC ADTS headers, FF F1 / FF F9, have layer bits 00 and are
 *		not matched.)
 */
static bool
looks_like_mp3_frame(const unsigned char *buf, int len)
{
	if (len < 4 || buf[0] != 0xFF || (buf[1] & 0xE0) != 0xE0)
		return false;
	if (((buf[1] >> 3) & 0x03) == 0x01)		/* reserved version */
		return false;
	if (((buf[1] >> 1) & 0x03) != 0x01)		/* not layer III */
		return false;
	if ((buf[2] >> 4) == 0x0F || ((buf[2] >> 2) & 0x03) == 0x03)
		return false;			/* bad bitrate or sample-rate index */
	return true;
}

/*
 * utf8_text
 *		Whether the prefix is printable text: valid UTF-8 (a sequence cut at
 *		the end of the prefix is accepted) with no control characters other
 *		than tab, newline, carriage return and form feed.  Called only for
 *		prefixes holding bytes >= 0x80; looks_like_text() answers the others
 *		from the histogram.
 */
static bool
utf8_text(const unsigned char *buf, int len)
{
	int			i = 0;

	while (i < len)
	{
		unsigned char c = buf[i];
		int			follow;

		if (c < 0x80)
		{
			if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f')
				return false;
			if (c == 0x7F)
				return false;
			i++;
			continue;
		}
		if ((c & 0xE0) == 0xC0 && c >= 0xC2)
			follow = 1;
		else if ((c & 0xF0) == 0xE0)
			follow = 2;
		else if ((c & 0xF8) == 0xF0 && c <= 0xF4)
			follow = 3;
		else
			return false;
		for (i++; follow > 0 && i < len; follow--, i++)
			if ((buf[i] & 0xC0) != 0x80)
				return false;
	}
	return true;
}

/*
 * looks_like_text
 *		utf8_text(buf, len), answered from the prefix's byte histogram when
 *		that suffices: a forbidden control byte means no, and a prefix of
 *		ASCII bytes only with none of them is text.  Only prefixes with
 *		bytes >= 0x80 are walked byte by byte (UTF-8 validation).
 */
static bool
looks_like_text(const unsigned char *buf, int len, const uint16 *counts)
{
	uint32		bad = 0;
	uint32		high = 0;
	int			i;

	for (i = 0; i < 0x20; i++)
		if (i != '\t' && i != '\n' && i != '\r' && i != '\f')
			bad |= counts[i];
	bad |= counts[0x7F];
	if (bad != 0)
		return false;
	for (i = 0x80; i < 0x100; i++)
		high |= counts[i];
	return high == 0 || utf8_text(buf, len);
}

/*
 * signature_type
 *		Content type named by the magic bytes at the start of buf (len > 0
 *		bytes), or SL_CT_OTHER when there is no known signature.
 */
static SlContentType
signature_type(const unsigned char *buf, int len)
{
	if (has_magic(buf, len, 0, "\xFF\xD8\xFF", 3))
		return SL_CT_JPEG;
	if (has_magic(buf, len, 0, "\x89PNG\r\n\x1A\n", 8))
		return SL_CT_PNG;
	if (has_magic(buf, len, 0, "GIF87a", 6) || has_magic(buf, len, 0, "GIF89a", 6))
		return SL_CT_GIF;
	if (has_magic(buf, len, 0, "RIFF", 4) && has_magic(buf, len, 8, "WEBP", 4))
		return SL_CT_WEBP;
	if (has_magic(buf, len, 0, "\x1F\x8B", 2))
		return SL_CT_GZIP;
	if (has_magic(buf, len, 0, "\x28\xB5\x2F\xFD", 4))
		return SL_CT_ZSTD;
	if (has_magic(buf, len, 0, "\xFD" "7zXZ\x00", 6))
		return SL_CT_XZ;
	if (has_magic(buf, len, 0, "BZh", 3) && len >= 4 && buf[3] >= '1' && buf[3] <= '9')
		return SL_CT_BZIP2;
	if (has_magic(buf, len, 0, "\x04\x22\x4D\x18", 4))
		return SL_CT_LZ4;
	if (has_magic(buf, len, 0, "PK\x03\x04", 4) ||
		has_magic(buf, len, 0, "PK\x05\x06", 4) ||
		has_magic(buf, len, 0, "PK\x07\x08", 4))
		return SL_CT_ZIP;
	if (has_magic(buf, len, 0, "7z\xBC\xAF\x27\x1C", 6))
		return SL_CT_7Z;
	if (has_magic(buf, len, 0, "%PDF-", 5))
		return SL_CT_PDF;
	if (has_magic(buf, len, 4, "ftyp", 4))
		return has_magic(buf, len, 8, "qt  ", 4) ? SL_CT_MOV : SL_CT_MP4;
	if (has_magic(buf, len, 4, "moov", 4) || has_magic(buf, len, 4, "mdat", 4) ||
		has_magic(buf, len, 4, "wide", 4))
		return SL_CT_MOV;
	if (has_magic(buf, len, 0, "ID3", 3) || looks_like_mp3_frame(buf, len))
		return SL_CT_MP3;
	if (has_magic(buf, len, 0, "OggS", 4))
		return SL_CT_OGG;
	return SL_CT_OTHER;
}

/*
 * storagelab_sniff_prefix
 *		Content type of a value whose first len (at most SL_SNIFF_PREFIX)
 *		bytes are buf; *entropy is set to the prefix's entropy in bits per
 *		byte (see prefix_entropy()).
 *
 * Signatures are checked first; without one, a long high-entropy prefix is
 * "high_entropy", printable UTF-8 is "text", anything else "other".
 */
SlContentType
storagelab_sniff_prefix(const unsigned char *buf, int len, double *entropy)
{
	uint16		counts[256];
	SlContentType type;

	Assert(len >= 0 && len <= SL_SNIFF_PREFIX);
	*entropy = 0.0;
	if (len == 0)
		return SL_CT_EMPTY;
	*entropy = prefix_entropy(buf, len, counts);
	type = signature_type(buf, len);
	if (type != SL_CT_OTHER)
		return type;
	if (len >= SL_HIGH_ENTROPY_MIN_LEN && *entropy >= SL_HIGH_ENTROPY_BITS)
		return SL_CT_HIGH_ENTROPY;
	if (looks_like_text(buf, len, counts))
		return SL_CT_TEXT;
	return SL_CT_OTHER;
}

/*
 * storagelab_content_type_name
 *		The name of a content type, as used in toast_profile()'s output.
 */
const char *
storagelab_content_type_name(SlContentType type)
{
	Assert(type >= 0 && type < SL_CT_NUM_TYPES);
	return content_type_names[type];
}

/*
 * storagelab_content_type_incompressible
 *		Whether values of this type are already compressed, so that pglz or
 *		lz4 would spend CPU for (almost) nothing.  PDF is not on the list:
 *		its streams are usually deflated, but its text parts still compress.
 */
bool
storagelab_content_type_incompressible(SlContentType type)
{
	switch (type)
	{
		case SL_CT_JPEG:
		case SL_CT_PNG:
		case SL_CT_GIF:
		case SL_CT_WEBP:
		case SL_CT_GZIP:
		case SL_CT_ZSTD:
		case SL_CT_XZ:
		case SL_CT_BZIP2:
		case SL_CT_LZ4:
		case SL_CT_ZIP:
		case SL_CT_7Z:
		case SL_CT_MP4:
		case SL_CT_MOV:
		case SL_CT_MP3:
		case SL_CT_OGG:
		case SL_CT_HIGH_ENTROPY:
			return true;
		default:
			return false;
	}
}

/*
 * c * log2(c) for c = 0 .. SL_SNIFF_PREFIX, in units of 2^-ENTROPY_SHIFT
 * (rounded), filled on first use.  A sum over the 256 byte values of a
 * prefix stays below 2^32: at most SL_SNIFF_PREFIX * log2(SL_SNIFF_PREFIX)
 * * 2^ENTROPY_SHIFT = 1024 * 10 * 65536.
 */
#define ENTROPY_SHIFT	16
static uint32 count_log2_count[SL_SNIFF_PREFIX + 1];
static bool count_log2_ready = false;

StaticAssertDecl(SL_SNIFF_PREFIX <= 1024,
				 "the c * log2(c) sums of prefix_entropy() must fit in 32 bits");

/*
 * prefix_entropy
 *		Shannon entropy of the byte histogram of buf (len > 0 bytes, at most
 *		SL_SNIFF_PREFIX), in bits per byte (0 to 8); the histogram is left in
 *		counts[256].  On short buffers this underestimates: n random bytes
 *		score about 8 - 255 / (2 n ln 2), i.e. 7.8 for 1,024 bytes, 7.6 for 512.
 *
 * Computed as log2(n) - (1/n) * sum(c * log2(c)) over the byte counts c,
 * the sum in integers from a table (error below 256 * 2^-17 / n bits per
 * byte): no logarithm, no floating point per byte or per count.  Four
 * interleaved histograms keep runs of equal bytes from stalling on one
 * counter.
 */
static double
prefix_entropy(const unsigned char *buf, int len, uint16 *counts)
{
	uint16		part[4][256];
	uint32		sum = 0;
	int			i;

	if (unlikely(!count_log2_ready))
	{
		count_log2_count[0] = 0;
		for (i = 1; i <= SL_SNIFF_PREFIX; i++)
			count_log2_count[i] = (uint32) rint(i * log2((double) i) * (1 << ENTROPY_SHIFT));
		count_log2_ready = true;
	}
	memset(part, 0, sizeof(part));
	for (i = 0; i + 3 < len; i += 4)
	{
		part[0][buf[i]]++;
		part[1][buf[i + 1]]++;
		part[2][buf[i + 2]]++;
		part[3][buf[i + 3]]++;
	}
	for (; i < len; i++)
		part[0][buf[i]]++;
	for (i = 0; i < 256; i++)
		counts[i] = part[0][i] + part[1][i] + part[2][i] + part[3][i];
	for (i = 0; i < 256; i++)
		sum += count_log2_count[counts[i]];
	return Max(0.0, log2((double) len) - ((double) sum / (1 << ENTROPY_SHIFT)) / len);
}
