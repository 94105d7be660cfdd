/*
 * web_assets.h — the dashboard's files (web/), built into the binary by
 * scripts/embed-web.sh so the server needs no path to find them.
 *
 * Memory: static, read-only, for the life of the process.
 */
#ifndef STALLSCOPE_SERVER_WEB_ASSETS_H
#define STALLSCOPE_SERVER_WEB_ASSETS_H

#include <stddef.h>

typedef struct srv_web_asset {
	const char *name; /* the file name under web/, "app.js" */
	const unsigned char *data;
	size_t len;
} srv_web_asset;

extern const srv_web_asset srv_web_assets[];
extern const size_t srv_web_nassets;

#endif
