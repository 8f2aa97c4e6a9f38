/* The timeline's tracks (timeline_priv.h): the pid and tid each event
 * goes on, and the metadata events that name and order them, written
 * the first time a track is used. Viewers group threads under their
 * process: a GPU is a process whose threads are the streams of every
 * traced process that ran kernels there; a traced process keeps its own
 * pid and threads. */
#include "timeline_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- naming ---- */

static void meta(struct timeline *tl, const char *what, uint32_t pid, uint32_t tid,
		 const char *key, const char *s, uint64_t n)
{
	tl_ev_begin(tl, 'M', NULL, pid, tid);
	tl_name(tl, what);
	if (s)
		tl_arg_str(tl, key, s, strlen(s));
	else
		tl_arg_u64(tl, key, n);
	tl_ev_end(tl);
}

static void name_process(struct timeline *tl, uint32_t pid, const char *name, uint64_t order)
{
	meta(tl, "process_name", pid, 0, "name", name, 0);
	meta(tl, "process_sort_index", pid, 0, "sort_index", NULL, order);
}

static void name_thread(struct timeline *tl, uint32_t pid, uint32_t tid, const char *name,
			uint64_t order)
{
	meta(tl, "thread_name", pid, tid, "name", name, 0);
	meta(tl, "thread_sort_index", pid, tid, "sort_index", NULL, order);
}

/* What /proc says a thread is called ("" if it is gone). The traced
 * process names itself, so this is only ever text for a label. */
static void comm_of(uint32_t pid, uint32_t tid, char *buf, size_t n)
{
	char path[64];
	if (tid)
		snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	buf[0] = 0;
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	if (!fgets(buf, (int)n, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
}

/* ---- the table ---- */

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

/* The slot of (kind, k) in the table, which holds it or is empty; NULL
 * when the table is full and could not grow. */
static struct tl_track *slot(struct timeline *tl, uint32_t kind, const uint64_t k[3])
{
	if (tl->ntracks + 1 > tl->cap / 2 && tl->cap < 2 * TL_MAX_TRACKS) {
		size_t cap = tl->cap ? 2 * tl->cap : 64;
		struct tl_track *t = calloc(cap, sizeof(*t));
		if (t) {
			for (size_t i = 0; i < tl->cap; i++) {
				struct tl_track *o = &tl->tracks[i];
				if (!o->kind)
					continue;
				size_t j = mix(mix(mix(o->kind, o->k[0]), o->k[1]), o->k[2]) & (cap - 1);
				while (t[j].kind)
					j = (j + 1) & (cap - 1);
				t[j] = *o;
			}
			free(tl->tracks);
			tl->tracks = t;
			tl->cap = cap;
		}
	}
	if (!tl->cap)
		return NULL;
	size_t j = mix(mix(mix(kind, k[0]), k[1]), k[2]) & (tl->cap - 1);
	for (size_t n = 0; n < tl->cap; n++, j = (j + 1) & (tl->cap - 1)) {
		struct tl_track *t = &tl->tracks[j];
		if (!t->kind || (t->kind == kind && !memcmp(t->k, k, sizeof(t->k))))
			return t;
	}
	return NULL;
}

/* The id of (kind, k): *fresh when it was made now (id from make);
 * 0 when no more tracks may be made. */
static uint32_t lookup(struct timeline *tl, uint32_t kind, const uint64_t k[3], uint32_t make,
		       bool *fresh)
{
	*fresh = false;
	struct tl_track *t = slot(tl, kind, k);
	if (t && t->kind)
		return t->id;
	if (!t || tl->ntracks >= TL_MAX_TRACKS)
		return 0;
	*t = (struct tl_track){ kind, make, { k[0], k[1], k[2] } };
	tl->ntracks++;
	*fresh = true;
	return make;
}

void tl_tracks_free(struct timeline *tl)
{
	free(tl->tracks);
	tl->tracks = NULL;
	tl->ntracks = tl->cap = 0;
	for (uint32_t i = 0; i < TL_GPUS; i++) {
		free(tl->gpu_names[i]);
		tl->gpu_names[i] = NULL;
	}
}

/* ---- tracks ---- */

uint32_t tl_gpu_pid(struct timeline *tl, uint32_t gpu)
{
	uint32_t g = gpu < TL_GPUS ? gpu : TL_GPUS - 1;
	if (!tl->gpu_named[g]) {
		char name[320];
		if (gpu >= TL_GPUS - 1)
			snprintf(name, sizeof(name), "GPU %u and above", g);
		else if (tl->gpu_names[g])
			snprintf(name, sizeof(name), "GPU %u (%s)", g, tl->gpu_names[g]);
		else
			snprintf(name, sizeof(name), "GPU %u", g);
		name_process(tl, TL_GPU_PID + g, name, g);
		tl->gpu_named[g] = true;
	}
	return TL_GPU_PID + g;
}

/* Stream handles 0, 1 (CU_STREAM_LEGACY) and 2 (CU_STREAM_PER_THREAD)
 * are the default streams. */
static void stream_label(char *buf, size_t n, uint64_t stream, uint32_t pid)
{
	if (stream == 0 || stream == 1)
		snprintf(buf, n, "default stream (pid %u)", pid);
	else if (stream == 2)
		snprintf(buf, n, "per-thread default stream (pid %u)", pid);
	else
		snprintf(buf, n, "stream 0x%llx (pid %u)", (unsigned long long)stream, pid);
}

void tl_stream_track(struct timeline *tl, uint32_t gpu, uint32_t pid, uint64_t stream,
		     uint32_t *tpid, uint32_t *ttid)
{
	*tpid = tl_gpu_pid(tl, gpu);
	uint64_t k[3] = { *tpid, pid, stream };
	bool fresh;
	uint32_t tid = lookup(tl, TL_TRACK_STREAM, k, tl->next_tid, &fresh);
	char name[96];
	if (fresh) {
		tl->next_tid++;
		stream_label(name, sizeof(name), stream, pid);
		name_thread(tl, *tpid, tid, name, tl->nstreams++);
	} else if (!tid) {
		tid = TL_SYN_TID - 1; /* the streams past the table's room */
		if (!tl->overflow_named[TL_TRACK_STREAM]) {
			tl->overflow_named[TL_TRACK_STREAM] = true;
			name_thread(tl, *tpid, tid, "other streams", UINT32_MAX);
		}
	}
	*ttid = tid;
}

void tl_thread_track(struct timeline *tl, uint32_t pid, uint32_t tid, const char *tcomm)
{
	uint64_t kp[3] = { pid, 0, 0 }, kt[3] = { pid, tid, 0 };
	bool fresh;
	char comm[64], name[128];
	lookup(tl, TL_TRACK_PROCESS, kp, pid, &fresh);
	if (fresh) {
		/* the process's name; its main thread's, if it is gone */
		comm_of(pid, 0, comm, sizeof(comm));
		if (!*comm && tid == pid)
			snprintf(comm, sizeof(comm), "%s", tcomm);
		if (*comm)
			snprintf(name, sizeof(name), "%s (pid %u)", comm, pid);
		else
			snprintf(name, sizeof(name), "pid %u", pid);
		/* after the GPUs */
		name_process(tl, pid, name, TL_GPUS + tl->nprocs++);
	}
	lookup(tl, TL_TRACK_THREAD, kt, tid, &fresh);
	if (fresh) {
		snprintf(comm, sizeof(comm), "%s", tcomm);
		if (!*comm)
			comm_of(pid, tid, comm, sizeof(comm));
		if (*comm)
			snprintf(name, sizeof(name), "%s (tid %u)", comm, tid);
		else
			snprintf(name, sizeof(name), "tid %u", tid);
		name_thread(tl, pid, tid, name, tid == pid ? 0 : tid);
	}
}

uint32_t tl_self_pid(struct timeline *tl)
{
	if (!tl->self_named) {
		tl->self_named = true;
		/* last, after the GPUs and the traced processes */
		name_process(tl, tl->self, "gpux: printf and maps", UINT32_MAX);
		name_thread(tl, tl->self, TL_SYN_TID - 2, "printf", 0);
	}
	return tl->self;
}

uint32_t tl_printf_tid(struct timeline *tl)
{
	tl_self_pid(tl);
	return TL_SYN_TID - 2;
}
