/*
 * demo_http.c — the demo's HTTP client: libcurl's easy interface, one
 * handle for the whole run so every request reuses one keep-alive
 * connection. See demo.h.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/cli/demo.h"

/* A reply larger than this is not one of ours. */
#define MAX_REPLY (64u << 20)

struct srv_demo_http {
	CURL *curl;
	char *base;
};

typedef struct reply_buf {
	char *data;
	size_t len, cap;
	bool overflow;
} reply_buf;

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *cls)
{
	reply_buf *b = cls;
	size_t n = size * nmemb;
	if (b->len + n + 1 > MAX_REPLY) {
		b->overflow = true;
		return 0;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *p = realloc(b->data, cap);
		if (!p)
			return 0;
		b->data = p;
		b->cap = cap;
	}
	memcpy(b->data + b->len, ptr, n);
	b->len += n;
	b->data[b->len] = '\0';
	return n;
}

srv_demo_http *srv_demo_http_new(const char *base)
{
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return NULL;
	srv_demo_http *h = calloc(1, sizeof *h);
	if (!h)
		return NULL;
	h->curl = curl_easy_init();
	h->base = strdup(base);
	if (!h->curl || !h->base) {
		srv_demo_http_free(h);
		return NULL;
	}
	return h;
}

void srv_demo_http_free(srv_demo_http *h)
{
	if (!h)
		return;
	if (h->curl)
		curl_easy_cleanup(h->curl);
	free(h->base);
	free(h);
	curl_global_cleanup();
}

int srv_demo_http_do(srv_demo_http *h, const char *method, const char *path,
		     const char *const *headers, const void *body, size_t len,
		     long *out_status, char **out_reply, char *err, size_t errcap)
{
	*out_reply = NULL;
	size_t url_len = strlen(h->base) + strlen(path) + 1;
	char *url = malloc(url_len);
	if (!url) {
		snprintf(err, errcap, "out of memory");
		return -1;
	}
	snprintf(url, url_len, "%s%s", h->base, path);
	struct curl_slist *list = NULL;
	bool ok = true;
	for (size_t i = 0; headers && headers[i] && ok; i++) {
		struct curl_slist *next = curl_slist_append(list, headers[i]);
		ok = next != NULL;
		list = next ? next : list;
	}
	/* curl adds "Expect: 100-continue" to large bodies and then waits for
	 * the go-ahead; the server answers at once anyway. */
	struct curl_slist *next = ok ? curl_slist_append(list, "Expect:") : NULL;
	ok = next != NULL;
	list = next ? next : list;

	reply_buf buf = {0};
	char curl_err[CURL_ERROR_SIZE] = "";
	CURL *c = h->curl;
	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &buf);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, curl_err);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	} else if (strcmp(method, "GET") != 0) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
	}
	CURLcode rc = ok ? curl_easy_perform(c) : CURLE_OUT_OF_MEMORY;
	curl_slist_free_all(list);
	free(url);
	if (rc != CURLE_OK || buf.overflow) {
		snprintf(err, errcap, "%s %s: %s", method, path,
			 buf.overflow ? "reply too large"
			 : curl_err[0] ? curl_err
				       : curl_easy_strerror(rc));
		free(buf.data);
		return -1;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, out_status);
	*out_reply = buf.data ? buf.data : strdup("");
	if (!*out_reply) {
		snprintf(err, errcap, "out of memory");
		return -1;
	}
	return 0;
}
