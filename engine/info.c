/*
 * info.c -- hot backup, the content hash and summary, and the invariant
 * checker behind `lapis inspect`.
 *
 * Threads: any; each call uses its own read snapshot.
 *
 * The content hash covers (key, value, create_rev, mod_rev, version) of the
 * current state in key order, so two stores with the same logical content
 * hash the same whatever their history, map size or hash seed.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eng_int.h"
#include "lapis/log.h"

/* ------------------------------------------------------------ backup */

struct copy_job {
	eng *e;
	int fd;
	int mrc;
};

static void *copy_thread(void *arg)
{
	struct copy_job *j = arg;
	j->mrc = mdb_env_copyfd2(j->e->env, j->fd, MDB_CP_COMPACT);
	close(j->fd);
	return NULL;
}

static lp_err fsync_dir_of(const char *path)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", path);
	int dfd = open(dirname(buf), O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		return LP_ERR(LP_E_IO);
	int r = fsync(dfd);
	close(dfd);
	return r ? LP_ERR(LP_E_IO) : LP_OK;
}

lp_err eng_backup(eng *e, const char *path,
		  bool (*progress)(void *ud, uint64_t bytes), void *ud)
{
	if (!e || !path)
		return LP_ERR(LP_E_INVAL);
	/* a temporary file of this copy's own: two backups to one path
	   each write theirs, and each renames a whole one; named by the
	   process, so that what a copy killed in it left can be told */
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld.XXXXXX", path,
		     (long)getpid()) >= (int)sizeof tmp)
		return LP_ERR(LP_E_INVAL);
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		lp_error("%s: %s", tmp, strerror(errno));
		return LP_ERR(LP_E_IO);
	}
	lp_err rc = LP_OK;
	int slot, err = 0;
	/* The copy holds a read transaction: keep the map from being resized
	   under it (growth waits until the copy is done). */
	eng__gate_enter(e, &slot);
	if (!progress) {
		int mrc = mdb_env_copyfd2(e->env, fd, MDB_CP_COMPACT);
		if (mrc) {
			err = mrc;
			rc = eng__from_mdb(mrc, "backup");
		}
	} else {
		/* Through a pipe, so we can count the bytes as they come. */
		int p[2];
		char *buf = malloc(1 << 16);
		if (!buf) {
			rc = LP_ERR(LP_E_NOMEM);
		} else if (pipe(p)) {
			err = errno;
			rc = LP_ERR(LP_E_IO);
		} else {
			struct copy_job j = {.e = e, .fd = p[1]};
			pthread_t th;
			if (pthread_create(&th, NULL, copy_thread, &j)) {
				close(p[0]);
				close(p[1]);
				rc = LP_ERR(LP_E_NOMEM);
			} else {
				uint64_t total = 0;
				ssize_t n;
				bool go = true;
				while (go &&
				       (n = read(p[0], buf, 1 << 16)) != 0) {
					if (n < 0 && errno == EINTR)
						continue;
					if (n < 0) { /* a copy cut short */
						err = errno;
						rc = LP_ERR(LP_E_IO);
						break;
					}
					if (!rc &&
					    write(fd, buf, (size_t)n) != n) {
						err = errno ? errno : ENOSPC;
						rc = LP_ERR(LP_E_IO);
					}
					total += (uint64_t)n;
					go = progress(ud, total);
				}
				/* stopped: the copy's next write fails
				   (EPIPE; LMDB takes its SIGPIPE) */
				if (!go && !rc)
					rc = LP_ERR(LP_E_CLOSED);
				close(p[0]);
				pthread_join(th, NULL);
				if (j.mrc && !rc) {
					err = j.mrc;
					rc = eng__from_mdb(j.mrc, "backup");
				}
			}
		}
		free(buf);
	}
	eng__gate_leave(e, slot);
	if (!rc && fsync(fd)) {
		err = errno;
		rc = LP_ERR(LP_E_IO);
	}
	if (close(fd) && !rc) {
		err = errno;
		rc = LP_ERR(LP_E_IO);
	}
	/* the cause by name (a full disk is ENOSPC, not "input/output") */
	if (rc && err)
		lp_error("%s: %s", tmp, mdb_strerror(err));
	if (!rc && rename(tmp, path)) {
		lp_error("rename %s: %s", path, strerror(errno));
		rc = LP_ERR(LP_E_IO);
	}
	if (!rc)
		rc = fsync_dir_of(path);
	if (rc)
		unlink(tmp);
	return rc;
}

/* ------------------------------------------------------------ info */

struct hash_state {
	uint64_t h;
	uint64_t n;
	uint64_t bytes;
};

static enum eng_take hash_rec(void *ud, const struct eng_record *r)
{
	struct hash_state *hs = ud;
	int64_t meta[3] = {r->create_rev, r->mod_rev, r->version};
	uint64_t hk = eng__hash64(0x6c61706973ULL, r->key, r->key_len);
	uint64_t hv = eng__hash64(hk, r->value, r->value_len);
	uint64_t hm = eng__hash64(hv, meta, sizeof meta);
	hs->h = eng__hash64(hs->h, &hm, sizeof hm);
	hs->n++;
	hs->bytes += r->value_len;
	return ENG_TAKE;
}

lp_err eng_info(eng *e, struct eng_info *out)
{
	if (!e || !out)
		return LP_ERR(LP_E_INVAL);
	eng_rd *r;
	lp_err rc = eng_rd_begin(e, &r);
	if (rc)
		return rc;
	struct eng_info info;
	memset(&info, 0, sizeof info);
	if ((rc = eng__rd_meta(r)))
		goto out;
	info.rev = r->rev;
	info.compacted = r->compacted;
	info.format = ENG_FORMAT;
	memcpy(info.cluster_id, e->cluster_id, sizeof info.cluster_id);
	struct hash_state hs = {.h = 0x636f6e74656e74ULL};
	struct eng_range_req req = {0};
	struct eng_range_res res;
	if ((rc = eng__range_all(r, &req, hash_rec, &hs, &res)))
		goto out;
	info.n_keys = hs.n;
	info.data_bytes = hs.bytes;
	snprintf(info.hash, sizeof info.hash, "%016llx",
		 (unsigned long long)hs.h);
	MDB_stat st;
	if (!mdb_stat(r->txn, e->db_hist, &st))
		info.n_history = st.ms_entries;
	if (!mdb_stat(r->txn, e->db_log, &st))
		info.n_log = st.ms_entries;
	MDB_envinfo ei;
	if (!mdb_env_info(e->env, &ei))
		info.map_bytes = ei.me_mapsize;
	char path[PATH_MAX];
	struct stat fs;
	snprintf(path, sizeof path, "%s/data.mdb", e->dir);
	if (!stat(path, &fs))
		info.file_bytes = (uint64_t)fs.st_size;
	*out = info;
out:
	eng_rd_end(r);
	return rc;
}

/* ------------------------------------------------------------ check */

#define FAIL(...)                                                             \
	do {                                                                  \
		snprintf(msg, msg_len, __VA_ARGS__);                          \
		rc = LP_E_CORRUPT;                                            \
		goto out;                                                     \
	} while (0)

static bool slot_ok(const struct rec *r)
{
	if (r->h.slot_off == ENG_NO_SLOT)
		return true;
	char dig[24];
	size_t n = eng__digits(r->h.mod_rev, dig);
	return r->h.slot_len == n &&
	       memcmp(r->value + r->h.slot_off, dig, n) == 0;
}

lp_err eng_check(eng *e, char *msg, size_t msg_len)
{
	char dummy[8];
	if (!msg || !msg_len) {
		msg = dummy;
		msg_len = sizeof dummy;
	}
	msg[0] = 0;
	eng_rd *r;
	lp_err rc = eng_rd_begin(e, &r);
	if (rc) {
		snprintf(msg, msg_len, "cannot read: %s", lp_strerror(rc));
		return rc;
	}
	MDB_cursor *c = NULL;
	if ((rc = eng__rd_meta(r)))
		FAIL("meta: %s", lp_strerror(rc));
	int64_t rev = r->rev, compacted = r->compacted;
	if (rev < 1 || compacted < 0 || compacted > rev)
		FAIL("meta: revision %lld, compacted %lld", (long long)rev,
		     (long long)compacted);
	/* 1. state records */
	MDB_val k, v;
	if (mdb_cursor_open(r->txn, e->db_state, &c))
		FAIL("cursor");
	int mrc = mdb_cursor_get(c, &k, &v, MDB_FIRST);
	for (; !mrc; mrc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
		struct rec s;
		if (!eng__rec_decode(k.mv_data, k.mv_size, &v, &s))
			FAIL("state: undecodable record");
		if (s.h.flags & REC_TOMB)
			FAIL("state: tombstone in current state");
		if (s.h.mod_rev > rev || s.h.create_rev > s.h.mod_rev ||
		    s.h.version < 1 || s.h.create_rev < 1)
			FAIL("state: bad revisions (create %lld mod %lld "
			     "version %lld, store %lld)",
			     (long long)s.h.create_rev, (long long)s.h.mod_rev,
			     (long long)s.h.version, (long long)rev);
		uint8_t ik[IK_MAX];
		size_t il = eng__ik(e, s.key, s.key_len, ik);
		if (il != k.mv_size || memcmp(ik, k.mv_data, il) != 0)
			FAIL("state: internal key does not match its key");
		if (!slot_ok(&s))
			FAIL("state: revision slot does not hold mod_rev %lld",
			     (long long)s.h.mod_rev);
	}
	if (mrc != MDB_NOTFOUND)
		FAIL("state walk: %s", mdb_strerror(mrc));
	mdb_cursor_close(c);
	c = NULL;
	/* 2. history: ordered below the state record, within the store */
	if (mdb_cursor_open(r->txn, e->db_hist, &c))
		FAIL("cursor");
	mrc = mdb_cursor_get(c, &k, &v, MDB_FIRST);
	for (; !mrc; mrc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
		if (k.mv_size < 10 || ((uint8_t *)k.mv_data)[k.mv_size - 9] != 0)
			FAIL("hist: malformed key");
		size_t il = k.mv_size - 9;
		int64_t hr = eng__hk_rev(k.mv_data, k.mv_size);
		struct rec h;
		if (!eng__rec_decode(k.mv_data, il, &v, &h))
			FAIL("hist: undecodable record");
		if (h.h.mod_rev != hr || hr > rev)
			FAIL("hist: entry at %lld holds mod_rev %lld",
			     (long long)hr, (long long)h.h.mod_rev);
		if (!(h.h.flags & REC_TOMB) && !slot_ok(&h))
			FAIL("hist: revision slot does not hold %lld",
			     (long long)hr);
		MDB_val sk = {il, k.mv_data}, sv;
		if (!mdb_get(r->txn, e->db_state, &sk, &sv)) {
			struct rec s;
			if (eng__rec_decode(sk.mv_data, il, &sv, &s) &&
			    s.h.mod_rev <= hr)
				FAIL("hist: entry at %lld not older than the "
				     "state's %lld",
				     (long long)hr, (long long)s.h.mod_rev);
		}
	}
	if (mrc != MDB_NOTFOUND)
		FAIL("hist walk: %s", mdb_strerror(mrc));
	mdb_cursor_close(c);
	c = NULL;
	/* 3. the log holds every revision in (compacted, rev] */
	if (mdb_cursor_open(r->txn, e->db_log, &c))
		FAIL("cursor");
	int64_t expect = compacted + 1 < 2 ? 2 : compacted + 1;
	mrc = mdb_cursor_get(c, &k, &v, MDB_FIRST);
	for (; !mrc; mrc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
		if (k.mv_size != LOGK_LEN || v.mv_size < sizeof(struct log_hdr))
			FAIL("log: malformed entry");
		int64_t lr = (int64_t)eng__get_be64(k.mv_data);
		/* Entries at or below the compacted revision are garbage a
		   running compaction has not reached yet (it publishes the new
		   bound first, then deletes in bounded steps). */
		if (lr <= compacted)
			continue;
		if (lr > rev)
			FAIL("log: revision %lld beyond the store's %lld",
			     (long long)lr, (long long)rev);
		if (lr == expect)
			expect++;
		else if (lr != expect - 1)
			FAIL("log: revision %lld missing", (long long)expect);
	}
	if (mrc != MDB_NOTFOUND)
		FAIL("log walk: %s", mdb_strerror(mrc));
	if (expect != rev + 1 && rev >= expect)
		FAIL("log: revisions %lld..%lld missing", (long long)expect,
		     (long long)rev);
out:
	if (c)
		mdb_cursor_close(c);
	eng_rd_end(r);
	return rc;
}
