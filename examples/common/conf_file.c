/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The examples' configuration file line reader (conf_file.h).
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "conf_file.h"

int
conf_refuse(struct conf_file *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(c->err, c->errlen, "%s:%u: ", c->path, c->line);
	if (n < 0 || (size_t)n >= c->errlen)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errlen - n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* The refusals of a line itself, before fn sees it; len bytes were read,
 * the newline included when there is one. */
static int
line_check(struct conf_file *c, const char *line, size_t len)
{
	const char *nul = memchr(line, '\0', len);

	if (nul != NULL)
		return conf_refuse(c, "NUL byte at column %zu (a text file "
				   "has none)", (size_t)(nul - line) + 1);
	if (len > 0 && line[len - 1] == '\n')
		len--;
	if (len > CONF_LINE_MAX)
		return conf_refuse(c, "line longer than %u characters",
				   CONF_LINE_MAX);
	return 0;
}

int
conf_file_read(const char *path, conf_line_fn fn, void *arg, char *err,
	       size_t errlen)
{
	struct conf_file c = { .path = path, .err = err, .errlen = errlen };
	char *line = NULL;
	size_t size = 0;
	struct stat st;
	ssize_t len;
	FILE *f;
	int ret = 0;

	f = fopen(path, "r");
	if (f == NULL) {
		snprintf(err, errlen, "%s: cannot open: %s", path,
			 strerror(errno));
		return -ENOENT;
	}
	/* fopen() opens a directory for reading; reading it then fails. */
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: is a directory (give the file)",
			 path);
		fclose(f);
		return -EISDIR;
	}
	/* getline(): the length read counts a NUL byte, which fgets()
	 * would have hidden. */
	while ((len = getline(&line, &size, f)) >= 0) {
		c.line++;
		ret = line_check(&c, line, (size_t)len);
		if (ret == 0)
			ret = fn(&c, line, arg);
		if (ret < 0)
			break;
	}
	if (ret == 0 && ferror(f)) {
		snprintf(err, errlen, "%s: read error after line %u: %s", path,
			 c.line, strerror(errno));
		ret = -EIO;
	}
	free(line);
	fclose(f);
	return ret;
}
