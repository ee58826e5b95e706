/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Text a message quotes from its input (a configuration file's key or value,
 * a name it gave): control characters written as escapes, so that a reason
 * stays one line whatever it quotes. Thread-safe (no state).
 */
#ifndef GNIO_TEXT_H
#define GNIO_TEXT_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/**
 * @p in into @p out: "\n", "\r" and "\t" as those two characters, any other
 * byte below 0x20 and 0x7f as "\xNN", the rest as it is; cut at a whole
 * character to fit @p len with its NUL.
 * @param in a NUL-terminated string
 * @param out where the escaped text goes
 * @param len bytes at @p out (at least 1)
 * @return @p out
 */
static inline const char *
gnio_text_escape(const char *in, char *out, size_t len)
{
	size_t o = 0;

	for (; *in != '\0'; in++) {
		unsigned char ch = (unsigned char)*in;
		char e[8];
		size_t n;

		if (ch == '\n' || ch == '\r' || ch == '\t')
			snprintf(e, sizeof(e), "\\%c", ch == '\n' ? 'n' : ch == '\r' ? 'r' : 't');
		else if (ch < 0x20 || ch == 0x7f)
			snprintf(e, sizeof(e), "\\x%02x", ch);
		else
			snprintf(e, sizeof(e), "%c", ch);
		n = strlen(e);
		if (o + n >= len)
			break;
		memcpy(out + o, e, n);
		o += n;
	}
	out[o] = '\0';
	return out;
}

#endif /* GNIO_TEXT_H */
