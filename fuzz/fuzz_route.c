/* fuzz_route.c — libFuzzer target: strings from outside — request paths
 * through the route table and its percent-decoding, zip entry names through srv_zip_classify, and
 * setting values through the size and listen-address parsers. */
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_target.h"
#include "server/api/route_table.h"
#include "server/service/config.h"
#include "server/service/unzip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const methods[] = {"GET", "POST", "PUT", "DELETE",
					      "HEAD", "PATCH"};
	if (size == 0 || size > 4096)
		return 0;
	const char *method = methods[data[0] % 6];
	char *path = malloc(size);
	memcpy(path, data + 1, size - 1);
	path[size - 1] = '\0';
	char *copy = strdup(path);

	size_t n;
	const srv_route *routes = srv_routes(&n);
	srv_route_match m;
	cm_err err = srv_route_find(routes, n, method, copy, &m);
	if (err == ERR_NONE) {
		if (!m.route || strcmp(m.route->method, method) != 0 ||
		    (m.app_param >= 0 && (size_t)m.app_param >= m.nparams))
			abort();
		for (size_t i = 0; i < m.nparams; i++)
			if (!m.params[i][0] || strchr(m.params[i], '/'))
				abort();
		size_t before[SRV_MAX_PARAMS];
		for (size_t i = 0; i < m.nparams; i++)
			before[i] = strlen(m.params[i]);
		if (srv_route_decode_params(&m))
			for (size_t i = 0; i < m.nparams; i++)
				if (strlen(m.params[i]) > before[i])
					abort();
	} else if (err != ERR_NO_ROUTE &&
		   (err != ERR_METHOD_NOT_ALLOWED || !m.allow[0])) {
		abort();
	}

	const char *name = NULL;
	srv_zip_entry kind = srv_zip_classify(path, &name);
	if (kind == SRV_ZIP_DEBUG_FILE || kind == SRV_ZIP_TOP_LEVEL) {
		size_t nl = strcspn(name, "/\\");
		if (nl == 0 || (nl == 2 && !memcmp(name, "..", 2)) ||
		    strstr(path, "/../") || !strncmp(path, "../", 3) ||
		    path[0] == '/')
			abort();
	}

	uint64_t bytes;
	char host[64];
	uint16_t port;
	(void)srv_config_parse_size(path, &bytes);
	if (srv_config_parse_listen(path, host, sizeof host, &port) == 0 &&
	    strlen(host) >= sizeof host)
		abort();
	free(copy);
	free(path);
	return 0;
}
