/*
 * test_ipaddr.c -- tests of server/ipaddr.c: kube's sloppy IP and CIDR
 * parsing for legacy fields (Go 1.16's net.ParseIP and ParseCIDR, kept in
 * k8s.io/utils) and apimachinery v0.33's warnings for non-standard forms.
 * The vectors are our own; the expected texts are apimachinery's.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../../server/ipaddr.h"

static void ok_ip(const char *s, const char *canon, bool v4, bool strict)
{
	struct srv_ip ip;
	cr_assert(srv_ip_parse(s, &ip), "%s should parse", s);
	char out[SRV_IP_TEXT];
	srv_ip_string(&ip, out);
	cr_assert_str_eq(out, canon, "%s", s);
	cr_assert_eq(ip.v4, v4, "%s: v4", s);
	cr_assert_eq(ip.strict, strict, "%s: strict", s);
}

Test(ipaddr, parses_as_go_1_16)
{
	ok_ip("10.1.2.3", "10.1.2.3", true, true);
	ok_ip("010.001.2.3", "10.1.2.3", true, false);
	ok_ip("0000000001.2.3.4", "1.2.3.4", true, false);
	ok_ip("::", "::", false, true);
	ok_ip("::1", "::1", false, true);
	ok_ip("2001:DB8:0:0:0:0:0:1", "2001:db8::1", false, true);
	ok_ip("2001:db8::0001", "2001:db8::1", false, true);
	ok_ip("2001:db8:0:1:0:0:1:0", "2001:db8:0:1::1:0", false, true);
	ok_ip("2001:0:0:1:0:0:0:1", "2001:0:0:1::1", false, true);
	ok_ip("1:0:1:0:1:0:1:0", "1:0:1:0:1:0:1:0", false, true);
	ok_ip("::ffff:1.2.3.4", "1.2.3.4", true, true);
	ok_ip("::ffff:01.2.3.4", "1.2.3.4", true, false);
	ok_ip("::1.2.3.4", "::102:304", false, true);
	ok_ip("64:ff9b::10.0.0.1", "64:ff9b::a00:1", false, true);
	ok_ip("2001:db8::00001", "2001:db8::1", false, false);
	static const char *const bad[] = {
	    "", "1.2.3", "1.2.3.4.5", "256.1.2.3", "1.2.3.4 ", " 1.2.3.4",
	    "1..2.3", "::1::", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7::8",
	    "2001:db8::1%eth0", "12345:", ":1", "1:", "2001:db8::fffff0",
	    "1:2:3:4:5:6:1.2.3.4:5", "::ffff:1.2.3", "x", "1.2.3.4/8",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct srv_ip ip;
		cr_assert_not(srv_ip_parse(bad[i], &ip), "\"%s\" parsed", bad[i]);
	}
	struct srv_ip ip;
	cr_assert_not(srv_ip_parse(NULL, &ip));
}

Test(ipaddr, cidrs)
{
	struct srv_ip ip;
	int bits;
	cr_assert(srv_cidr_parse("10.0.0.0/8", &ip, &bits) && bits == 8 && ip.strict);
	cr_assert(srv_cidr_parse("010.0.0.0/08", &ip, &bits) && bits == 8 && !ip.strict);
	cr_assert(srv_cidr_parse("2001:db8::/128", &ip, &bits) && bits == 128);
	cr_assert(srv_cidr_parse("::ffff:1.2.3.0/120", &ip, &bits) && ip.mapped);
	static const char *const bad[] = {"10.0.0.0", "10.0.0.0/33", "::/129",
					  "10.0.0.0/", "10.0.0.0/x", "/8",
					  "10.0.0.0/8/8", "10.0.0.0/-1"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		cr_assert_not(srv_cidr_parse(bad[i], &ip, &bits), "\"%s\" parsed",
			      bad[i]);
}

struct got {
	char text[4][400];
	int n;
};

static void collect(void *ud, const char *text)
{
	struct got *g = ud;
	if (g->n < 4)
		snprintf(g->text[g->n++], sizeof g->text[0], "%s", text);
}

Test(ipaddr, warnings)
{
	struct got g = {0};
	srv_ip_warnings("f", "10.1.2.3", collect, &g);
	srv_ip_warnings("f", "2001:db8::1", collect, &g);
	srv_ip_warnings("f", "bad", collect, &g);
	cr_assert_eq(g.n, 0);
	srv_ip_warnings("spec.externalIPs[0]", "010.1.2.3", collect, &g);
	srv_ip_warnings("f", "::ffff:1.2.3.4", collect, &g);
	srv_ip_warnings("f", "2001:DB8::1", collect, &g);
	cr_assert_eq(g.n, 3);
	cr_assert_str_eq(g.text[0], "spec.externalIPs[0]: non-standard IP address \"010.1.2.3\" will be considered invalid in a future Kubernetes release: use \"10.1.2.3\"");
	cr_assert_str_eq(g.text[1], "f: non-standard IP address \"::ffff:1.2.3.4\" will be considered invalid in a future Kubernetes release: use \"1.2.3.4\"");
	cr_assert_str_eq(g.text[2], "f: IPv6 address \"2001:DB8::1\" should be in RFC 5952 canonical format (\"2001:db8::1\")");

	struct got c = {0};
	srv_cidr_warnings("f", "10.0.0.0/8", collect, &c);
	srv_cidr_warnings("f", "2001:db8::/32", collect, &c);
	cr_assert_eq(c.n, 0);
	srv_cidr_warnings("f", "10.1.2.3/8", collect, &c);
	srv_cidr_warnings("f", "010.1.0.0/16", collect, &c);
	srv_cidr_warnings("f", "2001:DB8::/32", collect, &c);
	srv_cidr_warnings("f", "::ffff:1.2.3.0/120", collect, &c);
	cr_assert_eq(c.n, 4);
	cr_assert_str_eq(c.text[0], "f: CIDR value \"10.1.2.3/8\" is ambiguous in this context (should be \"10.0.0.0/8\" or \"10.1.2.3/32\"?)");
	cr_assert_str_eq(c.text[1], "f: non-standard CIDR value \"010.1.0.0/16\" will be considered invalid in a future Kubernetes release: use \"10.1.0.0/16\"");
	cr_assert_str_eq(c.text[2], "f: IPv6 CIDR value \"2001:DB8::/32\" should be in RFC 5952 canonical format (\"2001:db8::/32\")");
	cr_assert_str_eq(c.text[3], "f: non-standard CIDR value \"::ffff:1.2.3.0/120\" will be considered invalid in a future Kubernetes release: use \"1.2.3.0/24\"");
	/* an ambiguous IPv6 value: both warnings only when also non-standard */
	struct got d = {0};
	srv_cidr_warnings("f", "2001:db8::1/64", collect, &d);
	cr_assert_eq(d.n, 1);
	cr_assert_str_eq(d.text[0], "f: CIDR value \"2001:db8::1/64\" is ambiguous in this context (should be \"2001:db8::/64\" or \"2001:db8::1/128\"?)");
}
