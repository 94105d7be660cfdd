/*
 * netmask.h — address ranges in CIDR notation ("10.0.0.0/8", "::1/128"),
 * whether a peer's address falls in one (STALLSCOPE_METRICS_ALLOW), and
 * the client's address behind trusted proxies (STALLSCOPE_TRUSTED_PROXIES).
 * Lists and addresses are plain fixed-size data owned by their caller; the
 * header values passed in are only read.
 */
#ifndef STALLSCOPE_SERVER_NETMASK_H
#define STALLSCOPE_SERVER_NETMASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define SRV_NETMASK_MAX 32

typedef struct srv_netmask {
	uint8_t addr[16]; /* network byte order; IPv4 in the first 4 bytes */
	bool ipv6;
	uint8_t prefix; /* bits that must match: 0..32 or 0..128 */
} srv_netmask;

typedef struct srv_netmask_list {
	srv_netmask v[SRV_NETMASK_MAX];
	size_t n;
} srv_netmask_list;

/*
 * "127.0.0.1/32,10.0.0.0/8,::1/128" (spaces around commas allowed; a bare
 * address is a /32 or /128) → OUT. Host bits beyond the prefix are refused,
 * so a typo such as 10.0.0.1/8 is not silently widened. Returns 0, or -1.
 */
int srv_netmask_parse_list(const char *text, srv_netmask_list *out);

/*
 * Whether SA (AF_INET, or AF_INET6 — an IPv4-mapped ::ffff:a.b.c.d counts
 * as a.b.c.d) is in one of LIST's ranges. Any other family: no.
 */
bool srv_netmask_match(const srv_netmask_list *list, const struct sockaddr *sa);

/* Most X-Forwarded-For header lines srv_netmask_client reads. */
#define SRV_FORWARDED_MAX 16

/*
 * The client's address: PEER itself, unless PEER is in TRUSTED (the
 * proxies) and sent X-Forwarded-For. Then it is the right-most address of
 * those values that is not itself in TRUSTED (each proxy appends the peer
 * it saw, so only the part its own proxies wrote is believed), or the
 * left-most when all are. XFF holds N header values in the order
 * received, each a comma-separated list of bare IPv4 or IPv6 addresses;
 * an entry that is none, or more than SRV_FORWARDED_MAX lines, leaves the
 * client unknown: OUT's family is AF_UNSPEC, in no list's ranges. Without
 * a peer (NULL) the client is unknown too.
 */
void srv_netmask_client(const srv_netmask_list *trusted, const struct sockaddr *peer,
			const char *const *xff, size_t n, struct sockaddr_storage *out);

#endif
