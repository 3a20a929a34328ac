/*
 * IP addresses and CIDRs in kube's legacy, sloppy reading (ipaddr.h).
 */
#include "ipaddr.h"

#include <stdio.h>
#include <string.h>

#include "fields.h"
#include "registry/json.h"

#define BIG 0xFFFFFF /* Go's parsers give up on a number this large */

static const unsigned char v4_prefix[12] = {[10] = 0xff, [11] = 0xff};

/* Decimal digits at s: their value and count; false for none or too
   many. *lead0 is set when there are two or more and the first is 0. */
static bool dec(const char *s, int *n, size_t *len, bool *lead0)
{
	long v = 0;
	size_t i = 0;
	for (; s[i] >= '0' && s[i] <= '9'; i++) {
		v = v * 10 + (s[i] - '0');
		if (v >= BIG)
			return false;
	}
	if (!i)
		return false;
	*n = (int)v;
	*len = i;
	if (lead0)
		*lead0 = i > 1 && s[0] == '0';
	return true;
}


/* Four dotted decimal octets, the whole of the string s; leading zeros
   are taken (and make it not strict), as Go 1.16 did. */
static bool parse4(const char *s, unsigned char out[4], bool *strict)
{
	for (int i = 0; i < 4; i++) {
		if (i && *s++ != '.')
			return false;
		int v;
		size_t len;
		bool lead0;
		if (!dec(s, &v, &len, &lead0) || v > 255)
			return false;
		if (lead0 || len > 3)
			*strict = false;
		out[i] = (unsigned char)v;
		s += len;
	}
	return !*s;
}

static bool parse6(const char *s, unsigned char ip[16], bool *strict)
{
	memset(ip, 0, 16);
	int ellipsis = -1, i = 0;
	if (s[0] == ':' && s[1] == ':') {
		ellipsis = 0;
		s += 2;
		if (!*s)
			return true;
	}
	while (i < 16) {
		long v = 0;
		size_t c = 0;
		for (; reg_hex_digit(s[c]) >= 0; c++) {
			v = v * 16 + reg_hex_digit(s[c]);
			if (v >= BIG)
				return false;
		}
		if (!c || v > 0xFFFF)
			return false;
		if (s[c] == '.') {
			/* a trailing IPv4 address */
			if ((ellipsis < 0 && i != 12) || i + 4 > 16 ||
			    !parse4(s, ip + i, strict))
				return false;
			s += strlen(s);
			i += 4;
			break;
		}
		if (c > 4)
			*strict = false;
		ip[i] = (unsigned char)(v >> 8);
		ip[i + 1] = (unsigned char)v;
		i += 2;
		s += c;
		if (!*s)
			break;
		if (*s != ':' || !s[1])
			return false;
		s++;
		if (*s == ':') {
			if (ellipsis >= 0)
				return false;
			ellipsis = i;
			s++;
			if (!*s)
				break;
		}
	}
	if (*s)
		return false;
	if (i < 16) {
		if (ellipsis < 0)
			return false;
		int n = 16 - i;
		memmove(ip + ellipsis + n, ip + ellipsis, (size_t)(i - ellipsis));
		memset(ip + ellipsis, 0, (size_t)n);
	} else if (ellipsis >= 0) {
		return false; /* "::" stands for one zero group at least */
	}
	return true;
}

static void classify(struct srv_ip *ip, bool written6)
{
	ip->v4 = !memcmp(ip->b, v4_prefix, 12);
	ip->mapped = written6 && ip->v4;
}

bool srv_ip_parse(const char *s, struct srv_ip *ip)
{
	memset(ip, 0, sizeof *ip);
	if (!s)
		return false;
	ip->strict = true;
	size_t sep = strcspn(s, ".:");
	if (s[sep] == '.') {
		memcpy(ip->b, v4_prefix, 12);
		if (!parse4(s, ip->b + 12, &ip->strict))
			return false;
		classify(ip, false);
		return true;
	}
	if (s[sep] != ':' || !parse6(s, ip->b, &ip->strict))
		return false;
	classify(ip, true);
	return true;
}

static void string6(const unsigned char *b, char *out, size_t n)
{
	int e0 = -1, e1 = -1;
	for (int i = 0; i < 16; i += 2) {
		int j = i;
		while (j < 16 && !b[j] && !b[j + 1])
			j += 2;
		if (j > i && j - i > e1 - e0) {
			e0 = i;
			e1 = j;
			i = j;
		}
	}
	if (e1 - e0 <= 2)
		e0 = e1 = -1;
	size_t at = 0;
	out[0] = '\0';
	for (int i = 0; i < 16 && at < n; i += 2) {
		if (i == e0) {
			at += (size_t)snprintf(out + at, n - at, "::");
			i = e1;
			if (i >= 16)
				break;
		} else if (i > 0) {
			at += (size_t)snprintf(out + at, n - at, ":");
		}
		if (at < n)
			at += (size_t)snprintf(out + at, n - at, "%x",
					       (unsigned)(b[i] << 8 | b[i + 1]));
	}
}

void srv_ip_string(const struct srv_ip *ip, char out[SRV_IP_TEXT])
{
	if (ip->v4)
		snprintf(out, SRV_IP_TEXT, "%u.%u.%u.%u", ip->b[12], ip->b[13],
			 ip->b[14], ip->b[15]);
	else
		string6(ip->b, out, SRV_IP_TEXT);
}

/* The prefix length's digits: Go's dtoi, and whether netip would take
   them (no leading zero). */
static bool prefix_len(const char *s, int *bits, bool *strict)
{
	size_t len;
	bool lead0;
	if (!dec(s, bits, &len, &lead0) || s[len])
		return false;
	if (lead0)
		*strict = false;
	return true;
}

bool srv_cidr_parse(const char *s, struct srv_ip *ip, int *bits)
{
	memset(ip, 0, sizeof *ip);
	const char *slash = s ? strchr(s, '/') : NULL;
	if (!slash)
		return false;
	char addr[128];
	size_t n = (size_t)(slash - s);
	if (n >= sizeof addr)
		return false;
	memcpy(addr, s, n);
	addr[n] = '\0';
	ip->strict = true;
	int width;
	memcpy(ip->b, v4_prefix, 12);
	if (parse4(addr, ip->b + 12, &ip->strict)) {
		width = 32;
		classify(ip, false);
	} else {
		ip->strict = true;
		if (!parse6(addr, ip->b, &ip->strict))
			return false;
		width = 128;
		classify(ip, true);
	}
	return prefix_len(slash + 1, bits, &ip->strict) && *bits <= width;
}

/* fmt names field, then value, a and b quoted as Go's %q; b may be NULL
   for a text without it (printf ignores the argument left over). */
static void warnf(void (*warn)(void *, const char *), void *ud,
		  const char *fmt, const char *field, const char *value,
		  const char *a, const char *b)
{
	char qv[300], qa[100], qb[100] = "", text[800];
	srv_go_quote(value, qv, sizeof qv);
	srv_go_quote(a, qa, sizeof qa);
	if (b)
		srv_go_quote(b, qb, sizeof qb);
	snprintf(text, sizeof text, fmt, field, qv, qa, qb);
	warn(ud, text);
}

void srv_ip_warnings(const char *field, const char *value,
		     void (*warn)(void *ud, const char *text), void *ud)
{
	struct srv_ip ip;
	if (!srv_ip_parse(value, &ip))
		return;
	char canon[SRV_IP_TEXT];
	srv_ip_string(&ip, canon);
	if (!ip.strict || ip.mapped)
		warnf(warn, ud,
		      "%s: non-standard IP address %s will be considered invalid in a future Kubernetes release: use %s",
		      field, value, canon, NULL);
	else if (!ip.v4 && strcmp(canon, value))
		warnf(warn, ud,
		      "%s: IPv6 address %s should be in RFC 5952 canonical format (%s)",
		      field, value, canon, NULL);
}

void srv_cidr_warnings(const char *field, const char *value,
		       void (*warn)(void *ud, const char *text), void *ud)
{
	struct srv_ip ip;
	int bits;
	if (!srv_cidr_parse(value, &ip, &bits))
		return;
	/* the IPNet Go makes: the address masked to the prefix */
	int width = ip.v4 && !ip.mapped ? 32 : 128;
	int keep = width == 32 ? bits + 96 : bits;
	struct srv_ip net = ip;
	for (int i = 0; i < 16; i++) {
		int b = keep - i * 8;
		unsigned char m = b >= 8 ? 0xff : b <= 0 ? 0 : (unsigned char)(0xff << (8 - b));
		net.b[i] &= m;
	}
	net.v4 = !memcmp(net.b, v4_prefix, 12);
	char ns[SRV_IP_TEXT], is[SRV_IP_TEXT], netstr[SRV_IP_TEXT + 8],
	    single[SRV_IP_TEXT + 8];
	srv_ip_string(&net, ns);
	/* IPNet.String: a masked IPv4-mapped network prints as IPv4 */
	snprintf(netstr, sizeof netstr, "%s/%d", ns,
		 net.v4 && width == 128 ? bits - 96 : bits);
	srv_ip_string(&ip, is);
	snprintf(single, sizeof single, "%s/%d", is, width);
	bool warned = false;
	if (memcmp(ip.b, net.b, 16)) {
		warnf(warn, ud,
		      "%s: CIDR value %s is ambiguous in this context (should be %s or %s?)",
		      field, value, netstr, single);
		warned = true;
	}
	if (!ip.strict || ip.mapped) {
		warnf(warn, ud,
		      "%s: non-standard CIDR value %s will be considered invalid in a future Kubernetes release: use %s",
		      field, value, netstr, NULL);
		warned = true;
	}
	if (!warned && !ip.v4) {
		char pfx[SRV_IP_TEXT + 8];
		snprintf(pfx, sizeof pfx, "%s/%d", is, bits);
		if (strcmp(pfx, value))
			warnf(warn, ud,
			      "%s: IPv6 CIDR value %s should be in RFC 5952 canonical format (%s)",
			      field, value, pfx, NULL);
	}
}
