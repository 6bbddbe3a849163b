/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_EXAMPLE_CONF_FILE_H
#define QPIO_EXAMPLE_CONF_FILE_H

/*
 * The line reader of the examples' configuration files (qpio-pipeline's
 * rules, qpio-gateway's routes), with the refusals every such file
 * shares: a directory given as the file, a NUL byte in a line, a line too
 * long. Each refusal is one message, "FILE: rule" or "FILE:LINE: rule",
 * in the caller's buffer. Control path, one file at a time per reader.
 */

#include <stddef.h>

#include <rte_common.h>

/** Longest line a configuration file may hold, in characters, the
 *  newline not counted. */
#define CONF_LINE_MAX 256

/** A file being read: what a refusal names. */
struct conf_file {
	const char *path;
	unsigned int line;        /**< number of the line read, from 1 */
	char *err;                /**< the caller's buffer for the refusal */
	size_t errlen;
};

/**
 * What to do with one line: line is NUL-terminated (no NUL inside), at
 * most CONF_LINE_MAX characters plus its newline, and may be modified.
 * @return 0 to go on; a negative errno (after conf_refuse()) to stop.
 */
typedef int (*conf_line_fn)(struct conf_file *c, char *line, void *arg);

/**
 * Read the file at path and hand each line to fn, first to last.
 *
 * @param path    the file.
 * @param fn      called for each line, with arg.
 * @param err     buffer for the refusal: "FILE: cannot open: ...",
 *   "FILE: is a directory ...", "FILE:LINE: ..." (a NUL byte, a line
 *   longer than CONF_LINE_MAX characters, or fn's own).
 * @param errlen  bytes of err.
 * @return 0; -ENOENT (cannot open; the message has strerror()); -EISDIR
 *   (path is a directory); -EINVAL (NUL byte, long line); -EIO (a read
 *   error); fn's return when negative.
 */
int conf_file_read(const char *path, conf_line_fn fn, void *arg, char *err,
		   size_t errlen);

/**
 * Write the refusal "FILE:LINE: " followed by fmt into c's buffer (cut
 * to its size).
 * @return -EINVAL.
 */
int conf_refuse(struct conf_file *c, const char *fmt, ...)
	__rte_format_printf(2, 3);

#endif /* QPIO_EXAMPLE_CONF_FILE_H */
