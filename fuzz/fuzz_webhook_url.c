/* fuzz_webhook_url.c — libFuzzer target: the check of a webhook URL a
 * user submits (srv_webhook_url_check: libcurl's URL parser under our own
 * rules) and the signature of a body. The input is the URL (NULs end it
 * early, as in a C string); an accepted URL must be within the length
 * cap and start http:// or https://, a refusal must say why in a
 * NUL-terminated line, and the signature is always 7 + 64 characters. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fuzz/fuzz_target.h"
#include "server/service/webhook_send.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *url = malloc(size + 1);
	if (!url)
		return 0;
	memcpy(url, data, size);
	url[size] = '\0';
	char err[160];
	memset(err, 'x', sizeof err);
	if (srv_webhook_url_check(url, err, sizeof err) == 0) {
		if (strlen(url) > SRV_WEBHOOK_URL_MAX ||
		    (strncasecmp(url, "http://", 7) && strncasecmp(url, "https://", 8)))
			abort();
	} else if (!memchr(err, '\0', sizeof err) || strchr(err, '\n')) {
		abort();
	}
	char sig[SRV_WEBHOOK_SIGNATURE_LEN];
	srv_webhook_signature(url, (const char *)data, size, sig);
	if (strlen(sig) != SRV_WEBHOOK_SIGNATURE_LEN - 1 || strncmp(sig, "sha256=", 7))
		abort();
	free(url);
	return 0;
}
