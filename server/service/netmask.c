/* netmask.c — CIDR lists; see netmask.h. */
#include "server/service/netmask.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

static bool prefix_matches(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	unsigned whole = bits / 8, rest = bits % 8;
	if (memcmp(a, b, whole) != 0)
		return false;
	if (rest == 0)
		return true;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));
	return (a[whole] & mask) == (b[whole] & mask);
}

static int parse_one(const char *s, size_t len, srv_netmask *out)
{
	char buf[64];
	if (len == 0 || len >= sizeof buf)
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	char *slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	memset(out, 0, sizeof *out);
	unsigned max;
	if (inet_pton(AF_INET, buf, out->addr) == 1) {
		max = 32;
	} else if (inet_pton(AF_INET6, buf, out->addr) == 1) {
		out->ipv6 = true;
		max = 128;
	} else {
		return -1;
	}
	unsigned prefix = max;
	if (slash) {
		const char *p = slash + 1;
		if (!*p || strlen(p) > 3)
			return -1;
		prefix = 0;
		for (; *p; p++) {
			if (*p < '0' || *p > '9')
				return -1;
			prefix = prefix * 10 + (unsigned)(*p - '0');
		}
		if (prefix > max)
			return -1;
	}
	out->prefix = (uint8_t)prefix;
	/* The network address itself: host bits set mean a mistyped range. */
	for (unsigned bit = prefix; bit < max; bit++)
		if (out->addr[bit / 8] & (0x80 >> (bit % 8)))
			return -1;
	return 0;
}

int srv_netmask_parse_list(const char *text, srv_netmask_list *out)
{
	out->n = 0;
	const char *p = text;
	for (;;) {
		while (*p == ' ')
			p++;
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		while (len > 0 && p[len - 1] == ' ')
			len--;
		if (out->n == SRV_NETMASK_MAX || parse_one(p, len, &out->v[out->n]) < 0)
			return -1;
		out->n++;
		if (!end)
			return 0;
		p = end + 1;
	}
}

bool srv_netmask_match(const srv_netmask_list *list, const struct sockaddr *sa)
{
	uint8_t addr[16];
	bool ipv6;
	if (!sa)
		return false;
	if (sa->sa_family == AF_INET) {
		memcpy(addr, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
		ipv6 = false;
	} else if (sa->sa_family == AF_INET6) {
		const uint8_t *a6 =
			((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr;
		if (!memcmp(a6, v4_mapped, sizeof v4_mapped)) {
			memcpy(addr, a6 + 12, 4);
			ipv6 = false;
		} else {
			memcpy(addr, a6, 16);
			ipv6 = true;
		}
	} else {
		return false;
	}
	for (size_t i = 0; i < list->n; i++)
		if (list->v[i].ipv6 == ipv6 &&
		    prefix_matches(addr, list->v[i].addr, list->v[i].prefix))
			return true;
	return false;
}

/* One X-Forwarded-For entry (spaces and tabs around it dropped) as an
 * address; false when it is none. */
static bool parse_forwarded(const char *s, size_t len, struct sockaddr_storage *out)
{
	while (len > 0 && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	char buf[INET6_ADDRSTRLEN];
	if (len == 0 || len >= sizeof buf)
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	memset(out, 0, sizeof *out);
	struct sockaddr_in *v4 = (struct sockaddr_in *)(void *)out;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)(void *)out;
	if (inet_pton(AF_INET, buf, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		return true;
	}
	if (inet_pton(AF_INET6, buf, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		return true;
	}
	return false;
}

static void copy_peer(const struct sockaddr *peer, struct sockaddr_storage *out)
{
	memset(out, 0, sizeof *out);
	if (peer && peer->sa_family == AF_INET)
		memcpy(out, peer, sizeof(struct sockaddr_in));
	else if (peer && peer->sa_family == AF_INET6)
		memcpy(out, peer, sizeof(struct sockaddr_in6));
	else
		out->ss_family = AF_UNSPEC;
}

void srv_netmask_client(const srv_netmask_list *trusted, const struct sockaddr *peer,
			const char *const *xff, size_t n, struct sockaddr_storage *out)
{
	copy_peer(peer, out);
	if (n == 0 || !srv_netmask_match(trusted, peer))
		return;
	/* Left to right, the last entry not trusted is the right-most one; a
	 * malformed entry is that one unless an untrusted address follows. */
	struct sockaddr_storage first, a;
	bool have_first = false, have_last = false, last_bad = false;
	for (size_t i = 0; i < n && i < SRV_FORWARDED_MAX; i++) {
		for (const char *p = xff[i];;) {
			const char *comma = strchr(p, ',');
			size_t len = comma ? (size_t)(comma - p) : strlen(p);
			bool ok = parse_forwarded(p, len, &a);
			if (ok && !have_first) {
				first = a;
				have_first = true;
			}
			if (!ok || !srv_netmask_match(trusted, (const struct sockaddr *)&a)) {
				if (ok)
					*out = a;
				have_last = true;
				last_bad = !ok;
			}
			if (!comma)
				break;
			p = comma + 1;
		}
	}
	if (!have_last && have_first)
		*out = first;
	if (last_bad || n > SRV_FORWARDED_MAX) {
		memset(out, 0, sizeof *out);
		out->ss_family = AF_UNSPEC;
	}
}
