/*
 * ipaddr.h -- IP addresses and CIDRs as kube 1.33 reads its legacy fields
 * (Service clusterIPs, externalIPs, loadBalancerIP, source ranges,
 * Endpoints addresses): k8s.io/utils' ParseIPSloppy and ParseCIDRSloppy,
 * the Go 1.16 parsers that take leading zeros in IPv4 octets, and
 * apimachinery's warnings for values in such non-standard forms.
 *
 * Pure, any thread.
 */
#ifndef LAPIS_IPADDR_H
#define LAPIS_IPADDR_H

#include <stdbool.h>
#include <stddef.h>

struct srv_ip {
	unsigned char b[16]; /* IPv6 form; an IPv4 address as ::ffff:a.b.c.d */
	bool v4;	     /* Go's To4() != nil: IPv4, or IPv4-mapped IPv6 */
	bool mapped;	     /* written as IPv6 (::ffff:a.b.c.d) */
	bool strict;	     /* netip.ParseAddr takes it too: no leading 0s */
};

/* Room for any address's text, a prefix length included. */
#define SRV_IP_TEXT 64

/* ParseIPSloppy: false when s is no IP address. */
bool srv_ip_parse(const char *s, struct srv_ip *ip);

/* Go's net.IP.String: an IPv4 (or IPv4-mapped) address dotted, an IPv6
   one in RFC 5952 form. */
void srv_ip_string(const struct srv_ip *ip, char out[SRV_IP_TEXT]);

/* ParseCIDRSloppy: the address as written and the prefix length; false
   when s is no CIDR value. */
bool srv_cidr_parse(const char *s, struct srv_ip *ip, int *bits);

/* apimachinery's GetWarningsForIP and GetWarningsForCIDR for a value that
   parsed: each warning text ("spec.externalIPs[0]: non-standard IP
   address "010.1.2.3" will be considered invalid in a future Kubernetes
   release: use "10.1.2.3"") handed to warn. */
void srv_ip_warnings(const char *field, const char *value,
		     void (*warn)(void *ud, const char *text), void *ud);
void srv_cidr_warnings(const char *field, const char *value,
		       void (*warn)(void *ud, const char *text), void *ud);

#endif
