/*
 * netmask.h — address ranges in CIDR notation ("10.0.0.0/8", "::1/128")
 * and whether a peer's address falls in one (STALLSCOPE_METRICS_ALLOW).
 * Lists are plain fixed-size data owned by their caller.
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

#endif
