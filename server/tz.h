/*
 * tz.h -- time zones by name, as Go's time.LoadLocation finds them (the
 * system's TZif files) and t.In(loc) applies them: for CEL's timestamp
 * accessors with a zone argument (cel-go's timeZone).
 */
#ifndef LAPIS_TZ_H
#define LAPIS_TZ_H

#include <stddef.h>
#include <stdint.h>

enum srv_tz {
	SRV_TZ_OK,	/* *off set */
	SRV_TZ_UNKNOWN, /* Go: "unknown time zone NAME" */
	SRV_TZ_INVALID, /* Go: "time: invalid location name" */
};

/*
 * The offset east of UTC, in seconds, of the zone named name (n bytes;
 * "" and "UTC" are UTC, "Local" is taken as UTC, the zone a server in a
 * container has) at Unix time t. Reads /usr/share/zoneinfo and Go's other
 * system places on each call; any thread.
 */
enum srv_tz srv_tz_offset(const char *name, size_t n, int64_t t, int32_t *off);

/* The same for a TZif file's bytes (tests). */
enum srv_tz srv_tz_offset_data(const unsigned char *data, size_t len, int64_t t,
			       int32_t *off);

/* The proleptic Gregorian calendar: days since 1970-01-01 of y-m-d, and
   back (m 1-12, d 1-31). */
int64_t srv_days_from_civil(int64_t y, int m, int d);
void srv_civil_from_days(int64_t z, int64_t *y, int *m, int *d);
/* The days in month m (1-12) of year y. */
int srv_days_in_month(int m, int64_t y);

#endif
