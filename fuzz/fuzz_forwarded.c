/* fuzz_forwarded.c — libFuzzer target: the client's address behind
 * trusted proxies (srv_netmask_client), from X-Forwarded-For values a
 * client controls. The input is the header lines, split at '\n' (NULs end
 * a line early, as in the C strings libmicrohttpd hands over). From a
 * trusted peer the answer is an IPv4 or IPv6 address or unknown; from any
 * other peer it is that peer, whatever the lines say. */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_target.h"
#include "server/service/netmask.h"

static struct sockaddr_in peer4(uint32_t host_order)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	sa.sin_addr.s_addr = htonl(host_order);
	return sa;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Header lines are bounded by libmicrohttpd's connection memory. */
	static char text[16384];
	if (size >= sizeof text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	const char *lines[SRV_FORWARDED_MAX + 8];
	size_t n = 0;
	for (char *p = text; n < sizeof lines / sizeof lines[0];) {
		lines[n++] = p;
		char *nl = strchr(p, '\n');
		if (!nl)
			break;
		*nl = '\0';
		p = nl + 1;
	}
	srv_netmask_list trusted;
	if (srv_netmask_parse_list("10.0.0.0/8,fd00::/8", &trusted) < 0)
		abort();
	struct sockaddr_storage out;
	struct sockaddr_in proxy = peer4(0x0a000001), other = peer4(0xcb007101);
	srv_netmask_client(&trusted, (const struct sockaddr *)&proxy, lines, n, &out);
	if (out.ss_family != AF_UNSPEC && out.ss_family != AF_INET && out.ss_family != AF_INET6)
		abort();
	srv_netmask_client(&trusted, (const struct sockaddr *)&other, lines, n, &out);
	if (out.ss_family != AF_INET ||
	    memcmp(&((struct sockaddr_in *)(void *)&out)->sin_addr, &other.sin_addr, 4) != 0)
		abort();
	return 0;
}
