/*
 * quantity.h -- kube's resource.Quantity (apimachinery v0.33,
 * pkg/api/resource) as exact decimals, for the CEL quantity library
 * (apiserver pkg/cel/library/quantity.go).
 *
 * A value keeps the form Go would hold it in: the int64Amount fast form
 * (an int64 times 10^exp) or the inf.Dec form, with Go's unscaled
 * coefficient and scale (trailing zeros included). The form decides
 * what Go's AsInt64 answers (never for an inf.Dec, so "1.5Gi" is no
 * integer) and how AsApproximateFloat64 rounds, so both match Go's.
 *
 * Pure, any thread, no allocation.
 */
#ifndef LAPIS_QUANTITY_H
#define LAPIS_QUANTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Significant decimal digits a coefficient holds. */
#define SRV_QTY_DIGITS 128

/* An exact decimal: (-1)^neg * coefficient * 10^exp. */
struct srv_qty {
	int64_t exp;
	uint8_t nd; /* digits of the coefficient, 0 for zero */
	bool neg;   /* never set for zero */
	bool dec;   /* Go holds it as an inf.Dec, not an int64Amount */
	uint8_t d[SRV_QTY_DIGITS]; /* coefficient, least significant first */
};

/* apimachinery's parse errors, word for word. */
#define SRV_QTY_ERR_FORMAT                                                     \
	"quantities must match the regular expression "                        \
	"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
#define SRV_QTY_ERR_NUMERIC "unable to parse numeric part of quantity"
#define SRV_QTY_ERR_SUFFIX "unable to parse quantity's suffix"
/* Ours: Go would take the string, but its value needs more than
   SRV_QTY_DIGITS digits (as "1e-200" would not: it rounds up to 1n). */
#define SRV_QTY_ERR_DIGITS "quantity has too many digits"

/* resource.ParseQuantity of the n bytes at s: NULL on success, else one
   of the static SRV_QTY_ERR_* texts (and *out untouched). */
const char *srv_qty_parse(const char *s, size_t n, struct srv_qty *out);

/* resource.NewQuantity(i, ...). */
void srv_qty_from_int(int64_t i, struct srv_qty *out);

/* Quantity.Cmp: -1, 0 or 1. Exact; == in CEL is cmp == 0. */
int srv_qty_cmp(const struct srv_qty *a, const struct srv_qty *b);

/* Quantity.Add (or Sub) on a copy of a, into out (which may be a or b).
   false: the result needs more than SRV_QTY_DIGITS digits. */
bool srv_qty_add(const struct srv_qty *a, const struct srv_qty *b, bool sub,
		 struct srv_qty *out);

/* Quantity.Sign: -1, 0 or 1. */
int srv_qty_sign(const struct srv_qty *q);

/* Quantity.AsInt64: false (as Go's ok) for an inf.Dec, for a fraction
   (even "1.0", which Go keeps as 10 * 10^-1) and beyond int64. */
bool srv_qty_to_int(const struct srv_qty *q, int64_t *out);

/* Quantity.AsApproximateFloat64: float64(coefficient) * math.Pow10(exp),
   rounding as Go does; +-Inf beyond range. */
double srv_qty_to_double(const struct srv_qty *q);

#endif
