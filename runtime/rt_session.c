/* The session segment as the runtime sees it, kernel names, messages. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "rt.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptx_scan.h" /* ptx_glob */
#include "sess_layout.h"

static struct gpux_sess_hdr *sess, *root;
static bool sess_tried;
static int sess_fd = -1;

/* The generation at offset off of the session file, mapped for the
 * process's life (the controller reads old ones' final snapshots, and
 * the next generation carries maps from them), or NULL. */
static struct gpux_sess_hdr *map_at(uint64_t off)
{
	struct stat st;
	if (sess_fd < 0 || (off & 4095) || fstat(sess_fd, &st) ||
	    (uint64_t)st.st_size < off + sizeof(struct gpux_sess_hdr))
		return NULL;
	uint64_t len = (uint64_t)st.st_size - off;
	void *p = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED, sess_fd, (off_t)off);
	if (p == MAP_FAILED)
		return NULL;
	if (gpux_sess_check(p, len)) {
		munmap(p, (size_t)len);
		return NULL;
	}
	return p;
}

struct gpux_sess_hdr *rt_sess_root(void)
{
	rt_sess();
	return root;
}

void rt_saw_cuda(void)
{
	static bool said;
	struct gpux_sess_hdr *h;
	if (__atomic_load_n(&said, __ATOMIC_RELAXED) || !(h = rt_sess_root()))
		return;
	__atomic_store_n(&h->cuda_seen, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&said, true, __ATOMIC_RELAXED);
}

struct gpux_sess_hdr *rt_sess_next(void)
{
	struct gpux_sess_hdr *h = rt_sess();
	uint64_t off = h ? __atomic_load_n(&h->next_off, __ATOMIC_ACQUIRE) : 0;
	return off ? map_at(off) : NULL;
}

void rt_sess_move(struct gpux_sess_hdr *next, bool ack)
{
	struct gpux_sess_hdr *old = sess;
	__atomic_store_n(&sess, next, __ATOMIC_RELEASE);
	if (ack)
		__atomic_fetch_add(&old->moved, 1, __ATOMIC_ACQ_REL);
}

/* Whether fd is the segment whose header carries token (read without
 * mapping: fd may be any file the program reused the number for). */
static bool is_session(int fd, const uint64_t token[2], struct stat *st)
{
	struct gpux_sess_hdr h;
	return fd >= 0 && !fstat(fd, st) && S_ISREG(st->st_mode) &&
	       st->st_size >= (off_t)sizeof(h) && pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
	       h.magic == GPUX_SESS_MAGIC && h.version == GPUX_SESS_VERSION &&
	       h.token[0] == token[0] && h.token[1] == token[1];
}

/* The session's descriptor: the one this process inherited, else the
 * controller's through /proc (a process started with its descriptors
 * closed); -1 when neither is the session (gpux has ended). */
static int find_session(uint32_t ctl, int fd, const uint64_t token[2], struct stat *st)
{
	if (is_session(fd, token, st))
		return fd;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%u/fd/%d", ctl, fd);
	int own = open(path, O_RDWR | O_CLOEXEC);
	if (own >= 0 && !is_session(own, token, st)) {
		close(own);
		own = -1;
	}
	return own;
}

static struct gpux_sess_hdr *join(const char *env);

struct gpux_sess_hdr *rt_sess(void)
{
	if (sess_tried)
		return __atomic_load_n(&sess, __ATOMIC_ACQUIRE);
	sess_tried = true;
	const char *env = getenv(GPUX_SESS_ENV);
	if (!env || !*env)
		return NULL;
	return join(env);
}

struct gpux_sess_hdr *rt_sess_join(const char *value)
{
	struct gpux_sess_hdr *h = __atomic_load_n(&sess, __ATOMIC_ACQUIRE);
	if (h)
		return NULL; /* in a session already */
	sess_tried = true;
	return join(value);
}

/* The session GPUX_SESS_ENV's value names, mapped, or NULL. */
static struct gpux_sess_hdr *join(const char *env)
{
	uint32_t ctl;
	int fd;
	uint64_t token[2];
	struct stat st;
	if (gpux_sess_env_parse(env, &ctl, &fd, token)) {
		rt_warn("%s=%s is not a session; not tracing", GPUX_SESS_ENV, env);
		return NULL;
	}
	int given = fd;
	if ((fd = find_session(ctl, fd, token, &st)) < 0)
		return NULL; /* gpux has ended: this process is not traced */
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p != MAP_FAILED && gpux_sess_check(p, (uint64_t)st.st_size)) {
		rt_warn("the session segment is damaged or from another gpux version");
		munmap(p, (size_t)st.st_size);
		p = MAP_FAILED;
	}
	if (p == MAP_FAILED) {
		if (fd != given)
			close(fd);
		return NULL;
	}
	root = p;
	sess_fd = (int)fd;
	__atomic_store_n(&sess, (struct gpux_sess_hdr *)p, __ATOMIC_RELEASE);
	/* a live session already moved on: start at its newest generation */
	struct gpux_sess_hdr *next;
	while ((sess->flags & GPUX_SESS_LIVE) && (next = rt_sess_next()))
		rt_sess_move(next, true);
	return sess;
}

void rt_sess_gpu_name(int dev)
{
	typedef CUresult (*name_fn)(char *, int, CUdevice);
	static uint32_t done; /* bit per device */
	/* called per kernel record: a plain load keeps the usual case a read */
	if (dev < 0 || dev >= GPUX_SESS_MAX_GPUS ||
	    (__atomic_load_n(&done, __ATOMIC_RELAXED) & (1u << dev)) ||
	    (__atomic_fetch_or(&done, 1u << dev, __ATOMIC_RELAXED) & (1u << dev)))
		return;
	struct gpux_sess_hdr *r = rt_sess_root();
	name_fn fn = (name_fn)rt_cuda_sym("cuDeviceGetName");
	CUdevice d;
	char name[sizeof(r->gpus[0].name)] = "";
	if (!r || !fn || !rt_cu_ready() || rt_cu.DeviceGet(&d, dev) != CUDA_SUCCESS ||
	    fn(name, (int)sizeof(name) - 1, d) != CUDA_SUCCESS)
		return;
	name[sizeof(name) - 1] = 0;
	memcpy(r->gpus[dev].name, name, sizeof(name));
}

bool rt_tracing(void)
{
	static int on = -1;
	if (on < 0) {
		const char *e = getenv("GPUX_RT_TRACE");
		on = e && *e && *e != '0';
	}
	return on;
}

/* Into the segment, for the controller to print on its own stderr (the
 * program's stderr is the program's). False when there is no segment
 * or no entry left. */
static bool to_controller(const char *text)
{
	if (!root)
		return false;
	uint32_t i = __atomic_fetch_add(&root->msgs_used, 1, __ATOMIC_ACQ_REL);
	if (i >= GPUX_SESS_MAX_MSGS) {
		__atomic_fetch_add(&root->msgs_lost, 1, __ATOMIC_RELAXED);
		return false;
	}
	struct gpux_sess_msg *m = gpux_sess_msgs(root) + i;
	m->pid = (uint32_t)getpid();
	size_t n = strnlen(text, sizeof(m->text) - 1);
	memcpy(m->text, text, n);
	m->text[n] = '\0';
	if (text[n]) /* cut, and says so */
		memcpy(m->text + n - 3, "...", 3);
	__atomic_store_n(&m->ready, 1, __ATOMIC_RELEASE);
	return true;
}

static void to_stderr(const char *text)
{
	/* one write, so lines of several processes do not interleave */
	char line[1100];
	int n = snprintf(line, sizeof(line), "gpux: %s\n", text);
	if (n > (int)sizeof(line) - 1)
		n = (int)sizeof(line) - 1;
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}

static void say(bool controller, const char *fmt, va_list ap)
{
	char buf[1024];
	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (!controller || !to_controller(buf))
		to_stderr(buf);
}

void rt_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(true, fmt, ap);
	va_end(ap);
}

void rt_log(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(false, fmt, ap);
	va_end(ap);
}

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

static demangle_fn demangler(void)
{
	static demangle_fn fn;
	static bool tried;
	if (!tried) {
		tried = true;
		fn = (demangle_fn)rt_real_dlsym(RTLD_DEFAULT, "__cxa_demangle");
		if (!fn) {
			void *h = dlopen("libstdc++.so.6", RTLD_LAZY);
			if (h)
				fn = (demangle_fn)rt_real_dlsym(h, "__cxa_demangle");
		}
	}
	return fn;
}

const char *rt_demangle(const char *name, char *buf, size_t len)
{
	demangle_fn fn = strncmp(name, "_Z", 2) ? NULL : demangler();
	int status = -1;
	char *d = fn ? fn(name, NULL, NULL, &status) : NULL;
	snprintf(buf, len, "%s", d && status == 0 ? d : name);
	free(d);
	return buf;
}

/* The name every provider shows for a kernel: demangled, and when longer
 * than len - 1 bytes cut to len - 4 and marked with "..." (the same for
 * gdev: keys and cuda: strings, so their maps join; -v says the whole
 * name). */
const char *rt_kernel_name(const char *ptx_name, char *buf, size_t len)
{
	char whole[4096];
	rt_demangle(ptx_name, whole, sizeof(whole));
	size_t n = strlen(whole);
	if (n < len) {
		memcpy(buf, whole, n + 1);
	} else if (len > 4) {
		memcpy(buf, whole, len - 4);
		memcpy(buf + len - 4, "...", 4);
	} else if (len) {
		buf[0] = 0;
	}
	return buf;
}

void rt_kernel_str(const char *ptx_name, char out[GPUX_CEV_STR])
{
	char whole[GPUX_SESS_NAME_LEN];
	rt_kernel_name(ptx_name, whole, sizeof(whole));
	memset(out, 0, GPUX_CEV_STR);
	memcpy(out, whole, strnlen(whole, GPUX_CEV_STR - 1));
}

/* "void ns::f<int>(float*, int)" -> "ns::f<int>": the name without the
 * parameter list and a leading return type. */
static void short_name(const char *full, char *buf, size_t len)
{
	const char *end = full + strlen(full);
	int depth = 0;
	/* the parameter list: the last top-level '(' ... ')' */
	for (const char *p = end; p > full; p--) {
		char c = p[-1];
		if (c == ')')
			depth++;
		else if (c == '(' && --depth == 0) {
			end = p - 1;
			break;
		}
	}
	const char *start = full;
	depth = 0;
	for (const char *p = full; p < end; p++) {
		if (*p == '<' || *p == '(')
			depth++;
		else if ((*p == '>' || *p == ')') && depth)
			depth--;
		else if (*p == ' ' && !depth)
			start = p + 1;
	}
	snprintf(buf, len, "%.*s", (int)(end - start), start);
}

bool rt_glob_matches(const char *glob, const char *ptx_name)
{
	if (!glob || !*glob || ptx_glob(glob, ptx_name))
		return true;
	char full[1024], brief[1024];
	rt_demangle(ptx_name, full, sizeof(full));
	if (ptx_glob(glob, full))
		return true;
	short_name(full, brief, sizeof(brief));
	return ptx_glob(glob, brief);
}

/* Process-local memory of registered names, so a function loaded in two
 * modules (or contexts) keeps one id. */
struct name_ent {
	char *name;
	uint32_t id;
};
static struct name_ent *names;
static size_t nnames, cap;
/* A leaf lock: callers may hold rt_lock or not (CUPTI's thread does not
 * take it), and nothing is locked under it. */
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;

static void names_after_fork(void)
{
	pthread_mutex_init(&names_lock, NULL);
}

__attribute__((constructor)) static void names_init(void)
{
	pthread_atfork(NULL, NULL, names_after_fork);
}

static uint32_t name_id(const char *ptx_name);

uint32_t rt_name_id(const char *ptx_name)
{
	pthread_mutex_lock(&names_lock);
	uint32_t id = name_id(ptx_name);
	pthread_mutex_unlock(&names_lock);
	return id;
}

static uint32_t name_id(const char *ptx_name)
{
	for (size_t i = 0; i < nnames; i++)
		if (!strcmp(names[i].name, ptx_name))
			return names[i].id;
	struct gpux_sess_hdr *h = rt_sess_root();
	if (!h)
		return UINT32_MAX;
	uint32_t id = __atomic_fetch_add(&h->names_used, 1, __ATOMIC_ACQ_REL);
	if (id >= GPUX_SESS_MAX_NAMES) {
		static bool told;
		if (!told)
			rt_warn("more than %d kernel names; later ones print as ids",
				GPUX_SESS_MAX_NAMES);
		told = true;
		return UINT32_MAX;
	}
	struct gpux_sess_name *n = &gpux_sess_names(h)[id];
	n->pid = (uint32_t)getpid();
	rt_kernel_name(ptx_name, n->name, sizeof(n->name));
	__atomic_store_n(&n->ready, 1, __ATOMIC_RELEASE);
	if ((h->flags & GPUX_SESS_VERBOSE) && strlen(n->name) == sizeof(n->name) - 1) {
		/* cut: -v says the whole name once (as a message can hold it) */
		char whole[GPUX_SESS_MSG_LEN];
		rt_demangle(ptx_name, whole, sizeof(whole));
		if (strlen(whole) > sizeof(n->name) - 1)
			rt_warn("a kernel name longer than %zu bytes is shown cut with \"...\": %s",
				sizeof(n->name) - 1, whole);
	}
	if (nnames == cap) {
		size_t c = cap ? 2 * cap : 64;
		struct name_ent *v = realloc(names, c * sizeof(*v));
		if (!v)
			return id;
		names = v;
		cap = c;
	}
	char *copy = strdup(ptx_name);
	if (copy)
		names[nnames++] = (struct name_ent){ copy, id };
	return id;
}
