/* The pages a plain static web server shows: releases/index.html and index.json (every release:
 * date, row counts, sizes, checksums, links) and one index.html per release (its data card, row
 * counts, files with checksums, the report's plots). Plain HTML, no scripts. */
#ifndef LSCAT_NIGHTLY_SITE_H
#define LSCAT_NIGHTLY_SITE_H

#include "common/buf.h"

#include <jansson.h>

/* Write <dir>/index.html for the release in `dir`, described by `release` (its release.json
 * object: name, created_at, rows, files, ...); reads <dir>/README.md and lists the PNGs of <dir>/report.
 * Returns 0 or LSCAT_ERR. */
int nightly_site_release_page(const char *dir, const json_t *release);

/* Rewrite <releases_dir>/index.json and index.html (each written atomically) from every
 * release folder's release.json, newest first. Returns 0 or LSCAT_ERR. */
int nightly_site_index(const char *releases_dir);

/* Markdown as the data card uses it (headings, paragraphs, lists, tables, code blocks and
 * `code`) to HTML; everything else is escaped text. */
void nightly_site_markdown(struct buf *out, const char *md);
/* `s` with & < > " escaped. */
void nightly_site_escape(struct buf *out, const char *s);

#endif
