/*
 * keys.c -- internal keys, history and log keys, and the record encoding.
 *
 * Pure functions, any thread. See eng_int.h for the key layout and why long
 * keys keep their order.
 */
#include <string.h>

#include "eng_int.h"

void eng__be64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--) {
		p[i] = (uint8_t)v;
		v >>= 8;
	}
}

uint64_t eng__get_be64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

void eng__logk(uint8_t *k, int64_t rev, uint32_t idx)
{
	eng__be64(k, (uint64_t)rev);
	k[8] = (uint8_t)(idx >> 24);
	k[9] = (uint8_t)(idx >> 16);
	k[10] = (uint8_t)(idx >> 8);
	k[11] = (uint8_t)idx;
}

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A seeded 64-bit hash: eight bytes at a time through a strong mixer. Not
   cryptographic; the seed is random per store, so colliding long keys cannot
   be chosen without reading the store's meta. */
uint64_t eng__hash64(uint64_t seed, const void *p, size_t n)
{
	const uint8_t *s = p;
	uint64_t h = mix64(seed ^ (n * 0x9e3779b97f4a7c15ULL));
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = mix64(h ^ w) + 0x9e3779b97f4a7c15ULL;
		s += 8;
		n -= 8;
	}
	uint64_t w = 0;
	memcpy(&w, s, n);
	return mix64(h ^ w ^ ((uint64_t)n << 56));
}

uint64_t eng_hash64(uint64_t seed, const void *p, size_t n)
{
	return eng__hash64(seed, p, n);
}

lp_err eng__key_ok(const void *key, size_t len)
{
	if (!key || len == 0)
		return LP_ERR(LP_E_INVAL);
	if (len > ENG_KEY_MAX)
		return LP_ERR(LP_E_KEYTOOLONG);
	if (memchr(key, 0, len))
		return LP_ERR(LP_E_INVAL);
	return LP_OK;
}

size_t eng__ik(const eng *e, const uint8_t *key, size_t len, uint8_t *ik)
{
	if (len <= IK_SHORT_MAX) {
		memcpy(ik, key, len);
		return len;
	}
	static const char hex[] = "0123456789abcdef";
	memcpy(ik, key, IK_SHORT_MAX);
	uint64_t h = eng__hash64(e->hash_seed, key, len);
	for (int i = IK_HASH_HEX - 1; i >= 0; i--) {
		ik[IK_SHORT_MAX + i] = (uint8_t)hex[h & 15];
		h >>= 4;
	}
	return IK_MAX;
}

size_t eng__hk(const uint8_t *ik, size_t ik_len, int64_t rev, uint8_t *hk)
{
	memcpy(hk, ik, ik_len);
	hk[ik_len] = 0;
	eng__be64(hk + ik_len + 1, (uint64_t)rev);
	return ik_len + 9;
}

int64_t eng__hk_rev(const uint8_t *hk, size_t len)
{
	return (int64_t)eng__get_be64(hk + len - 8);
}

size_t eng__digits(int64_t v, char *buf)
{
	char tmp[24];
	size_t n = 0;
	uint64_t u = (uint64_t)v;
	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	for (size_t i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	return n;
}
