/*
 * test_tz.c -- tests of server/tz.c: zones by name as Go's LoadLocation
 * reads the system's TZif files (Debian's tzdata, which scripts/deps.sh
 * installs), the POSIX TZ rule of a file's footer past its last
 * transition, and the names Go refuses. Expected offsets are the zones'
 * published rules.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "../../server/tz.h"

static int64_t at(int64_t y, int mo, int d, int h, int mi)
{
	return srv_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60;
}

static int32_t off_of(const char *zone, int64_t t)
{
	int32_t off = 12345;
	cr_assert_eq(srv_tz_offset(zone, strlen(zone), t, &off), SRV_TZ_OK,
		     "%s", zone);
	return off;
}

Test(tz, named_zones_as_go)
{
	/* New York: EST, EDT from 2024-03-10 07:00Z */
	cr_assert_eq(off_of("America/New_York", at(2024, 3, 10, 6, 59)),
		     -5 * 3600);
	cr_assert_eq(off_of("America/New_York", at(2024, 3, 10, 7, 0)),
		     -4 * 3600);
	/* past the file's transitions: its footer's rule */
	cr_assert_eq(off_of("America/New_York", at(2050, 7, 1, 12, 0)),
		     -4 * 3600);
	cr_assert_eq(off_of("America/New_York", at(2050, 1, 1, 12, 0)),
		     -5 * 3600);
	/* before the first transition: local mean time, -4:56:02 */
	cr_assert_eq(off_of("America/New_York", at(1800, 1, 1, 12, 0)),
		     -(4 * 3600 + 56 * 60 + 2));
	/* the southern hemisphere's summer spans the new year */
	cr_assert_eq(off_of("Australia/Sydney", at(2050, 1, 1, 0, 0)),
		     11 * 3600);
	cr_assert_eq(off_of("Australia/Sydney", at(2050, 7, 1, 0, 0)),
		     10 * 3600);
	cr_assert_eq(off_of("Asia/Kolkata", at(2024, 1, 1, 0, 0)),
		     5 * 3600 + 1800);
	cr_assert_eq(off_of("UTC", at(2024, 1, 1, 0, 0)), 0);
	cr_assert_eq(off_of("", at(2024, 1, 1, 0, 0)), 0);
	cr_assert_eq(off_of("Local", at(2024, 1, 1, 0, 0)), 0);
}

Test(tz, names_go_refuses)
{
	int32_t off;
	cr_assert_eq(srv_tz_offset("Nope/Zone", 9, 0, &off), SRV_TZ_UNKNOWN);
	cr_assert_eq(srv_tz_offset("America", 7, 0, &off), SRV_TZ_UNKNOWN,
		     "a directory");
	cr_assert_eq(srv_tz_offset("../etc/passwd", 13, 0, &off),
		     SRV_TZ_INVALID);
	cr_assert_eq(srv_tz_offset("/etc/localtime", 14, 0, &off),
		     SRV_TZ_INVALID);
	cr_assert_eq(srv_tz_offset("a\0b", 3, 0, &off), SRV_TZ_UNKNOWN);
}

/* A version 2 file of one type (EST) and no transitions: its footer's rule
   decides every time, as Go's fake transition at the start of time lets
   it. */
static size_t footer_only(unsigned char *buf, const char *footer)
{
	size_t o = 0;
	for (int pass = 0; pass < 2; pass++) {
		memcpy(buf + o, "TZif2", 5);
		memset(buf + o + 5, 0, 39);
		buf[o + 39] = 1; /* typecnt */
		buf[o + 43] = 4; /* charcnt */
		o += 44;
		static const unsigned char est[6] = {0xff, 0xff, 0xb9, 0xb0,
						     0,	   0}; /* -18000, std */
		memcpy(buf + o, est, 6);
		o += 6;
		memcpy(buf + o, "EST", 4);
		o += 4;
	}
	buf[o++] = '\n';
	memcpy(buf + o, footer, strlen(footer));
	o += strlen(footer);
	buf[o++] = '\n';
	return o;
}

Test(tz, footer_rules)
{
	unsigned char buf[256];
	int32_t off;
	size_t n = footer_only(buf, "EST5EDT,M3.2.0,M11.1.0");
	/* 2030: DST from Sunday 10 March 07:00Z to Sunday 3 November 06:00Z */
	cr_assert_eq(srv_tz_offset_data(buf, n, at(2030, 3, 10, 6, 59), &off),
		     SRV_TZ_OK);
	cr_assert_eq(off, -18000);
	srv_tz_offset_data(buf, n, at(2030, 3, 10, 7, 0), &off);
	cr_assert_eq(off, -14400);
	srv_tz_offset_data(buf, n, at(2030, 11, 3, 5, 59), &off);
	cr_assert_eq(off, -14400);
	srv_tz_offset_data(buf, n, at(2030, 11, 3, 6, 0), &off);
	cr_assert_eq(off, -18000);
	/* a Julian day rule with a time, and a fixed zone */
	n = footer_only(buf, "<+03>-3<+04>,J60/1,J300/1:30");
	srv_tz_offset_data(buf, n, at(2031, 3, 1, 0, 0), &off);
	cr_assert_eq(off, 4 * 3600, "1 March is day 60 in any year");
	srv_tz_offset_data(buf, n, at(2031, 2, 27, 0, 0), &off);
	cr_assert_eq(off, 3 * 3600);
	n = footer_only(buf, "<-0330>3:30");
	srv_tz_offset_data(buf, n, at(2031, 7, 1, 0, 0), &off);
	cr_assert_eq(off, -(3 * 3600 + 1800));
	/* not TZif, or cut short */
	cr_assert_eq(
	    srv_tz_offset_data((const unsigned char *)"TZ", 2, 0, &off),
	    SRV_TZ_UNKNOWN);
	cr_assert_eq(srv_tz_offset_data(buf, 50, 0, &off), SRV_TZ_UNKNOWN);
}

Test(tz, civil_days_round_trip)
{
	for (int64_t z = -800000; z <= 800000; z += 997) {
		int64_t y;
		int m, d;
		srv_civil_from_days(z, &y, &m, &d);
		cr_assert_eq(srv_days_from_civil(y, m, d), z);
	}
	cr_assert_eq(srv_days_from_civil(1970, 1, 1), 0);
	cr_assert_eq(srv_days_from_civil(2000, 3, 1), 11017);
}
