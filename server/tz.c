/*
 * tz.c -- time zones by name for CEL's timestamp accessors, as Go finds
 * and applies them (time.LoadLocation, Location.lookup, tzset), and the
 * proleptic Gregorian calendar the timestamp code shares.
 *
 * A zone is read from its TZif file in the places Go's LoadLocation looks
 * on Unix: the 64-bit block of a version 2+ file (the 32-bit one of a
 * version 1 file) gives the transitions; past the last one, the POSIX TZ
 * rule of the footer applies, as Go's tzset reads it.
 *
 * Pure but for the file reads; any thread.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tz.h"

int64_t srv_days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

void srv_civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

/* ------------------------------------------------------------ POSIX TZ */

enum { HOUR = 3600, DAY = 86400 };

/* A number in [min, max] at *s (Go's tzsetNum). */
static bool tz_num(const char **s, int min, int max, int *out)
{
	const char *p = *s;
	int v = 0;
	if (*p < '0' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (*p - '0');
		if (v > max)
			return false;
	}
	if (v < min)
		return false;
	*s = p;
	*out = v;
	return true;
}

/* [+-]hh[:mm[:ss]] (Go's tzsetOffset: hours up to 24*7). */
static bool tz_off(const char **s, int *out)
{
	const char *p = *s;
	bool neg = *p == '-';
	if (*p == '+' || *p == '-')
		p++;
	int h, m = 0, sec = 0;
	if (!tz_num(&p, 0, 24 * 7, &h))
		return false;
	if (*p == ':') {
		p++;
		if (!tz_num(&p, 0, 59, &m))
			return false;
		if (*p == ':') {
			p++;
			if (!tz_num(&p, 0, 59, &sec))
				return false;
		}
	}
	int v = h * HOUR + m * 60 + sec;
	*out = neg ? -v : v;
	*s = p;
	return true;
}

/* A zone abbreviation: <...> or three or more letters (Go's tzsetName). */
static bool tz_name(const char **s)
{
	const char *p = *s;
	if (*p == '<') {
		const char *e = strchr(p, '>');
		if (!e)
			return false;
		*s = e + 1;
		return true;
	}
	size_t i = strcspn(p, "0123456789,-+");
	if (i < 3)
		return false;
	*s = p + i;
	return true;
}

struct rule {
	char kind; /* 'J' Julian day, 'D' day of year, 'M' month.week.day */
	int day, week, mon;
	int time; /* seconds after local midnight (default 2 h) */
};

static bool tz_rule(const char **s, struct rule *r)
{
	const char *p = *s;
	memset(r, 0, sizeof *r);
	if (*p == 'J') {
		p++;
		r->kind = 'J';
		if (!tz_num(&p, 1, 365, &r->day))
			return false;
	} else if (*p == 'M') {
		p++;
		r->kind = 'M';
		if (!tz_num(&p, 1, 12, &r->mon) || *p++ != '.' ||
		    !tz_num(&p, 1, 5, &r->week) || *p++ != '.' ||
		    !tz_num(&p, 0, 6, &r->day))
			return false;
	} else {
		r->kind = 'D';
		if (!tz_num(&p, 0, 365, &r->day))
			return false;
	}
	r->time = 2 * HOUR;
	if (*p == '/') {
		p++;
		if (!tz_off(&p, &r->time))
			return false;
	}
	*s = p;
	return true;
}

static bool leap(int64_t y)
{
	return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

int srv_days_in_month(int m, int64_t y)
{
	static const int len[12] = {31, 28, 31, 30, 31, 30,
				    31, 31, 30, 31, 30, 31};
	return m == 2 && leap(y) ? 29 : len[m - 1];
}

/* When rule r fires in year, in seconds from the year's start in UTC, at
   offset off (Go's tzruleTime). */
static int64_t rule_time(int64_t year, const struct rule *r, int off)
{
	static const int before[12] = {0,   31,	 59,  90,  120, 151,
				       181, 212, 243, 273, 304, 334};
	int64_t s = 0;
	if (r->kind == 'J') {
		s = (int64_t)(r->day - 1) * DAY;
		if (leap(year) && r->day >= 60)
			s += DAY;
	} else if (r->kind == 'D') {
		s = (int64_t)r->day * DAY;
	} else {
		/* the weekday of the month's first day, then its r->day */
		int64_t first = srv_days_from_civil(year, r->mon, 1);
		int dow = (int)(((first % 7) + 11) % 7); /* 0 Sunday */
		int d = r->day - dow;
		if (d < 0)
			d += 7;
		int days = srv_days_in_month(r->mon, year);
		for (int i = 1; i < r->week; i++) {
			if (d + 7 >= days)
				break;
			d += 7;
		}
		d += before[r->mon - 1];
		if (leap(year) && r->mon > 2)
			d++;
		s = (int64_t)d * DAY;
	}
	return s + r->time - off;
}

/* The offset at t by the footer rule s (Go's tzset); false: not one. */
static bool tz_extend(const char *s, int64_t t, int32_t *off)
{
	int std, dst;
	if (!tz_name(&s) || !tz_off(&s, &std))
		return false;
	std = -std; /* POSIX offsets are west of UTC */
	if (!*s || *s == ',') {
		*off = std;
		return true;
	}
	if (!tz_name(&s))
		return false;
	if (!*s || *s == ',') {
		dst = std + HOUR;
	} else {
		if (!tz_off(&s, &dst))
			return false;
		dst = -dst;
	}
	if (!*s)
		s = ",M3.2.0,M11.1.0"; /* tzcode's default rules */
	if (*s != ',' && *s != ';')
		return false;
	s++;
	struct rule start, end;
	if (!tz_rule(&s, &start) || *s++ != ',' || !tz_rule(&s, &end) || *s)
		return false;
	int64_t days = t / DAY - (t % DAY < 0), year;
	int m, d;
	srv_civil_from_days(days, &year, &m, &d);
	int64_t ysec = (days - srv_days_from_civil(year, 1, 1)) * DAY + t % DAY;
	int64_t a = rule_time(year, &start, std),
		b = rule_time(year, &end, dst);
	int lo = std, hi = dst;
	if (b < a) { /* the southern hemisphere: the labels swap */
		int64_t x = a;
		a = b;
		b = x;
		lo = dst;
		hi = std;
	}
	*off = ysec < a || ysec >= b ? lo : hi;
	return true;
}

/* ------------------------------------------------------------ TZif */

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const unsigned char *p)
{
	return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

enum srv_tz srv_tz_offset_data(const unsigned char *data, size_t len, int64_t t,
			       int32_t *off)
{
	const unsigned char *p = data, *end = data + len;
	if (len < 44 || memcmp(p, "TZif", 4))
		return SRV_TZ_UNKNOWN;
	bool v2 = p[4] >= '2';
	size_t w = 4; /* transition time width */
	for (int pass = 0; pass < 2; pass++) {
		if ((size_t)(end - p) < 44 || memcmp(p, "TZif", 4))
			return SRV_TZ_UNKNOWN;
		uint32_t isut = be32(p + 20), isstd = be32(p + 24),
			 leapn = be32(p + 28), timen = be32(p + 32),
			 typen = be32(p + 36), charn = be32(p + 40);
		p += 44;
		if (timen > 100000 || typen > 256 || typen == 0 ||
		    charn > 65536 || leapn > 100000 || isut > 256 ||
		    isstd > 256)
			return SRV_TZ_UNKNOWN;
		size_t need = timen * w + timen + typen * 6 + charn +
			      leapn * (w + 4) + isstd + isut;
		if ((size_t)(end - p) < need)
			return SRV_TZ_UNKNOWN;
		if (pass == 0 && v2) { /* Go reads the 64-bit block */
			p += need;
			w = 8;
			continue;
		}
		const unsigned char *tx = p, *idx = p + timen * w,
				    *types = idx + timen;
		for (uint32_t i = 0; i < timen; i++)
			if (idx[i] >= typen)
				return SRV_TZ_UNKNOWN;
#define TX(i)                                                                  \
	(w == 8 ? be64(tx + (size_t)(i)*8) : (int32_t)be32(tx + (size_t)(i)*4))
#define UTOFF(z) ((int32_t)be32(types + (size_t)(z)*6))
#define ISDST(z) (types[(size_t)(z)*6 + 4] != 0)
		/* no transitions: Go adds one at the start of time, so the
		   first type holds until the footer's rule takes over */
		uint32_t lo = 0, hi = timen;
		if (timen > 0 && t < TX(0)) {
			/* Go's lookupFirstZone */
			uint32_t z = 0;
			bool used = false;
			for (uint32_t i = 0; i < timen && !used; i++)
				used = idx[i] == 0;
			if (used) {
				bool found = false;
				if (timen > 0 && ISDST(idx[0]))
					for (int zi = (int)idx[0] - 1;
					     zi >= 0 && !found; zi--)
						if (!ISDST(zi)) {
							z = (uint32_t)zi;
							found = true;
						}
				for (uint32_t zi = 0; zi < typen && !found;
				     zi++)
					if (!ISDST(zi)) {
						z = zi;
						found = true;
					}
				if (!found)
					z = 0;
			}
			*off = UTOFF(z);
			return SRV_TZ_OK;
		}
		while (hi - lo > 1) {
			uint32_t m = lo + (hi - lo) / 2;
			if (t < TX(m))
				hi = m;
			else
				lo = m;
		}
		*off = UTOFF(timen ? idx[lo] : 0);
#undef TX
#undef UTOFF
#undef ISDST
		p += need;
		/* past the last transition, the footer's rule (v2+) */
		if ((timen == 0 || lo == timen - 1) && v2 && p < end &&
		    *p == '\n') {
			const unsigned char *nl =
			    memchr(p + 1, '\n', (size_t)(end - p - 1));
			if (nl && nl - p - 1 < 128) {
				char rule[128];
				memcpy(rule, p + 1, (size_t)(nl - p - 1));
				rule[nl - p - 1] = '\0';
				int32_t e;
				if (rule[0] && tz_extend(rule, t, &e))
					*off = e;
			}
		}
		return SRV_TZ_OK;
	}
	return SRV_TZ_UNKNOWN;
}

enum { TZ_FILE_MAX = 1 << 16 };

enum srv_tz srv_tz_offset(const char *name, size_t n, int64_t t, int32_t *off)
{
	if (n == 0 || (n == 3 && !memcmp(name, "UTC", 3)) ||
	    (n == 5 && !memcmp(name, "Local", 5))) {
		*off = 0;
		return SRV_TZ_OK;
	}
	/* Go's LoadLocation: no "..", no leading / or \ */
	for (size_t i = 0; i + 1 < n; i++)
		if (name[i] == '.' && name[i + 1] == '.')
			return SRV_TZ_INVALID;
	if (name[0] == '/' || name[0] == '\\')
		return SRV_TZ_INVALID;
	if (memchr(name, '\0', n) || n > 255)
		return SRV_TZ_UNKNOWN;
	static const char *const dirs[] = {
	    "/usr/share/zoneinfo/", "/usr/share/lib/zoneinfo/",
	    "/usr/lib/locale/TZ/", "/etc/zoneinfo/"};
	for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++) {
		char path[320];
		snprintf(path, sizeof path, "%s%.*s", dirs[d], (int)n, name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		unsigned char *buf = malloc(TZ_FILE_MAX);
		size_t got = 0;
		ssize_t r = 0;
		while (buf && got < TZ_FILE_MAX &&
		       (r = read(fd, buf + got, TZ_FILE_MAX - got)) > 0)
			got += (size_t)r;
		close(fd);
		enum srv_tz rc = buf && r >= 0
				     ? srv_tz_offset_data(buf, got, t, off)
				     : SRV_TZ_UNKNOWN;
		free(buf);
		return rc;
	}
	return SRV_TZ_UNKNOWN;
}
