#include "tracepoint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define NAME_LEN_MAX 255

static const char *const default_roots[] = {
	"/sys/kernel/tracing",
	"/sys/kernel/debug/tracing", /* older systems, tracefs under debugfs */
};
static const char *root_override;

/* Element types of arrays read as strings rather than bytes. */
static const char *const string_elems[] = { "char", "const char" };

void tracepoint_set_root(const char *dir)
{
	root_override = dir;
}

bool tracepoint_name_ok(const char *s)
{
	if (!s || !*s || strnlen(s, NAME_LEN_MAX + 1) > NAME_LEN_MAX)
		return false;
	return !strchr(s, '/') && !strstr(s, "..");
}

/* The first tracefs events/ directory we can read, into buf. Tells "none
 * there" (-ENODEV) from "there but forbidden" (-EACCES). */
static int events_dir(char *buf, size_t len)
{
	const char *const *roots = default_roots;
	size_t nroots = ARRAY_LEN(default_roots);
	int err = -ENODEV;

	if (root_override) {
		roots = &root_override;
		nroots = 1;
	}
	for (size_t i = 0; i < nroots; i++) {
		struct stat st;
		int w = snprintf(buf, len, "%s/events", roots[i]);
		if (w < 0 || (size_t)w >= len)
			continue;
		if (stat(buf, &st) < 0) {
			if (errno == EACCES)
				err = -EACCES;
			continue;
		}
		if (!S_ISDIR(st.st_mode))
			continue;
		if (access(buf, R_OK | X_OK) < 0) {
			err = -EACCES;
			continue;
		}
		return 0;
	}
	return err;
}

static char *trim(char *s, char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	*end = '\0';
	return s;
}

static bool is_ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

static bool has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

static bool read_num(const char *line, const char *key, unsigned *out)
{
	const char *p = strstr(line, key);
	if (!p)
		return false;
	char *end;
	errno = 0;
	unsigned long v = strtoul(p + strlen(key), &end, 10);
	if (errno || end == p + strlen(key) || v > UINT_MAX)
		return false;
	*out = (unsigned)v;
	return true;
}

/* An array of n integers of the record (unsigned long args[6]): its
 * elements are what args.args[i] reads; NULL type when they are not
 * integers of a size the record can hold. */
static struct type int_array(struct arena *a, const struct tp_field *tf, unsigned n,
			     bool is_signed)
{
	unsigned es = n ? tf->size / n : 0;
	struct type *inner = arena_alloc(a, sizeof(*inner));
	if (!n || es * n != tf->size || (es != 1 && es != 2 && es != 4 && es != 8) || !inner)
		return TYPE_U64;
	*inner = TYPE_INT(es * 8, is_signed);
	return (struct type){ .kind = TY_ARRAY, .inner = inner, .count = n };
}

static struct type field_type(struct arena *a, const char *elem, const struct tp_field *tf,
			      unsigned n, bool is_signed)
{
	if (tf->array) {
		for (size_t i = 0; i < ARRAY_LEN(string_elems); i++)
			if (!strcmp(elem, string_elems[i]))
				return TYPE_STR;
		return tf->dynamic || strchr(elem, '*') ? TYPE_U64 : int_array(a, tf, n, is_signed);
	}
	if (strchr(elem, '*'))
		return TYPE_U64;
	switch (tf->size) {
	case 1: case 2: case 4: case 8:
		return TYPE_INT(tf->size * 8, is_signed);
	default:
		return TYPE_U64;
	}
}

/* One "\tfield:DECL;\toffset:N;\tsize:N;\tsigned:N;" line. Returns 1 for a
 * field, 0 for one to skip, -EPROTO when malformed. */
static int parse_field(struct arena *a, char *line, struct tp_field *tf)
{
	unsigned sign = 0, count = 0;
	char *decl = line + strspn(line, " \t");
	if (!has_prefix(decl, "field:"))
		return 0;
	decl += strlen("field:");
	char *semi = strchr(decl, ';');
	if (!semi)
		return -EPROTO;
	*semi = '\0';
	const char *rest = semi + 1;

	memset(tf, 0, sizeof(*tf));
	if (!read_num(rest, "offset:", &tf->offset) ||
	    !read_num(rest, "size:", &tf->size))
		return -EPROTO;
	read_num(rest, "signed:", &sign); /* absent on old kernels */

	decl = trim(decl, semi);
	char *name_end = decl + strlen(decl);
	if (name_end > decl && name_end[-1] == ']') {
		char *br = strrchr(decl, '[');
		if (!br)
			return -EPROTO;
		tf->array = true;
		count = (unsigned)strtoul(br + 1, NULL, 10);
		name_end = br;
	}
	char *name = name_end;
	while (name > decl && is_ident_char(name[-1]))
		name--;
	if (name == name_end || name == decl)
		return -EPROTO;
	if (has_prefix(name, "common_"))
		return 0;

	char *doc = arena_strdup(a, decl);
	char *fname = arena_strndup(a, name, (size_t)(name_end - name));
	char *type = trim(decl, name);
	if (has_prefix(type, "__data_loc ") || has_prefix(type, "__rel_loc ")) {
		tf->dynamic = true;
		tf->rel = has_prefix(type, "__rel_loc");
		type = strchr(type, ' ') + 1;
		char *br = strstr(type, "[]");
		if (br) {
			tf->array = true;
			type = trim(type, br);
		}
	}
	tf->f.name = fname;
	tf->f.type = field_type(a, type, tf, count, sign != 0);
	tf->f.unif = UNIF_UNIFORM;
	tf->f.doc = doc;
	return 1;
}

static int parse_format(struct arena *a, FILE *f, struct tp_field **out,
			size_t *n)
{
	struct tp_field *v = NULL;
	size_t len = 0, cap = 0, linecap = 0;
	char *line = NULL;
	bool in_format = false, seen_format = false;
	int err = 0;

	while (getline(&line, &linecap, f) >= 0) {
		if (!in_format) {
			in_format = seen_format = has_prefix(line, "format:");
			continue;
		}
		if (has_prefix(line, "print fmt:"))
			break;
		struct tp_field tf;
		int r = parse_field(a, line, &tf);
		if (r < 0) {
			err = r;
			break;
		}
		if (!r)
			continue;
		if (len == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			struct tp_field *nv = realloc(v, ncap * sizeof(*v));
			if (!nv) {
				err = -ENOMEM;
				break;
			}
			v = nv;
			cap = ncap;
		}
		v[len++] = tf;
	}
	free(line);
	if (!err && !seen_format)
		err = -EPROTO;
	if (!err) {
		*out = arena_zalloc(a, (len + 1) * sizeof(**out));
		if (len)
			memcpy(*out, v, len * sizeof(*v));
		*n = len;
	}
	free(v);
	return err;
}

int tracepoint_layout(struct arena *a, const char *category, const char *name,
		      struct tp_field **out, size_t *n)
{
	char path[PATH_MAX];
	if (!tracepoint_name_ok(category) || !tracepoint_name_ok(name))
		return -EINVAL;
	int err = events_dir(path, sizeof(path));
	if (err)
		return err;
	size_t used = strlen(path);
	int w = snprintf(path + used, sizeof(path) - used, "/%s/%s/format",
			 category, name);
	if (w < 0 || (size_t)w >= sizeof(path) - used)
		return -EINVAL;

	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	err = parse_format(a, f, out, n);
	fclose(f);
	return err;
}

int tracepoint_fields(struct arena *a, const char *category, const char *name,
		      struct field **out, size_t *n)
{
	struct tp_field *tf;
	size_t count;
	int err = tracepoint_layout(a, category, name, &tf, &count);
	if (err)
		return err;
	struct field *f = arena_zalloc(a, (count + 1) * sizeof(*f));
	for (size_t i = 0; i < count; i++)
		f[i] = tf[i].f;
	*out = f;
	*n = count;
	return 0;
}

/* tracefs may not fill d_type; fall back to a stat then. */
static bool entry_is_dir(DIR *d, const struct dirent *de)
{
	if (de->d_type != DT_UNKNOWN)
		return de->d_type == DT_DIR;
	struct stat st;
	return !fstatat(dirfd(d), de->d_name, &st, 0) && S_ISDIR(st.st_mode);
}

struct name_vec {
	char **v;
	size_t len, cap;
};

static int push_name(struct name_vec *nv, char *s)
{
	if (nv->len == nv->cap) {
		size_t ncap = nv->cap ? nv->cap * 2 : 256;
		char **v = realloc(nv->v, ncap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		nv->v = v;
		nv->cap = ncap;
	}
	nv->v[nv->len++] = s;
	return 0;
}

static int list_category(struct arena *a, const char *events,
			 const char *cat, struct name_vec *nv)
{
	char path[PATH_MAX];
	int w = snprintf(path, sizeof(path), "%s/%s", events, cat);
	if (w < 0 || (size_t)w >= sizeof(path))
		return -EINVAL;
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	int err = 0;
	struct dirent *de;
	while (!err && (de = readdir(d))) {
		if (de->d_name[0] == '.' || !entry_is_dir(d, de))
			continue;
		err = push_name(nv, arena_printf(a, "%s:%s", cat, de->d_name));
	}
	closedir(d);
	return err;
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

int tracepoint_list(struct arena *a, const char *category, char ***names,
		    size_t *n)
{
	char events[PATH_MAX];
	struct name_vec nv = { 0 };
	int err;

	if (category && !tracepoint_name_ok(category))
		return -EINVAL;
	err = events_dir(events, sizeof(events));
	if (err)
		return err;

	if (category) {
		err = list_category(a, events, category, &nv);
	} else {
		DIR *d = opendir(events);
		if (!d)
			return -errno;
		struct dirent *de;
		while (!err && (de = readdir(d))) {
			if (de->d_name[0] == '.' || !entry_is_dir(d, de) ||
			    !strcmp(de->d_name, "ftrace"))
				continue;
			err = list_category(a, events, de->d_name, &nv);
		}
		closedir(d);
	}
	if (!err) {
		if (nv.len)
			qsort(nv.v, nv.len, sizeof(*nv.v), cmp_str);
		*names = arena_zalloc(a, (nv.len + 1) * sizeof(**names));
		if (nv.len)
			memcpy(*names, nv.v, nv.len * sizeof(*nv.v));
		*n = nv.len;
	}
	free(nv.v);
	return err;
}

/* The kernel's functions first, then each module's, by name. */
static int cmp_kfunc(const void *x, const void *y)
{
	const struct kfunc *a = x, *b = y;
	int m = strcmp(a->module ? a->module : "", b->module ? b->module : "");
	return m ? m : strcmp(a->name, b->name);
}

bool kretprobe_banned(const char *fn)
{
	static const char *const banned[] = {
		"_raw_spin_lock", "_raw_spin_lock_irqsave", "_raw_spin_unlock_irqrestore",
		"queued_spin_lock_slowpath",
	};
	for (size_t i = 0; i < sizeof(banned) / sizeof(banned[0]); i++)
		if (!strcmp(fn, banned[i]))
			return true;
	return false;
}

/* available_filter_functions: "name" or "name [module]" a line. */
int tracefs_functions(struct arena *a, const char *glob, const char *module,
		      struct kfunc **out, size_t *n)
{
	const char *const *roots = root_override ? &root_override : default_roots;
	size_t nroots = root_override ? 1 : ARRAY_LEN(default_roots);
	FILE *f = NULL;
	int err = -ENODEV;
	for (size_t i = 0; i < nroots && !f; i++) {
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/available_filter_functions", roots[i]);
		f = fopen(path, "re");
		if (!f && errno != ENOENT)
			err = -errno;
	}
	if (!f)
		return err;
	struct kfunc *v = NULL;
	size_t len = 0, cap = 0, lcap = 0;
	char *line = NULL;
	err = 0;
	while (!err && getline(&line, &lcap, f) > 0) {
		line[strcspn(line, "\n")] = '\0';
		char *sp = strchr(line, ' '), *mod = NULL;
		if (sp) {
			*sp = '\0';
			mod = strchr(sp + 1, '[');
			if (mod) {
				mod++;
				mod[strcspn(mod, "]")] = '\0';
			}
		}
		if (!*line || (glob && fnmatch(glob, line, 0)) ||
		    (module && (!mod || fnmatch(module, mod, 0))))
			continue;
		if (len == cap) {
			cap = cap ? 2 * cap : 64;
			struct kfunc *nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				err = -ENOMEM;
				break;
			}
			v = nv;
		}
		v[len].name = arena_strdup(a, line);
		v[len].module = mod ? arena_strdup(a, mod) : NULL;
		len++;
	}
	if (!err && ferror(f))
		err = -EIO;
	free(line);
	fclose(f);
	if (!err) {
		/* sorted, each once: static functions of one name are listed
		 * once per file, and the kernel attaches by name */
		size_t k = 0;
		if (len)
			qsort(v, len, sizeof(*v), cmp_kfunc);
		for (size_t i = 0; i < len; i++)
			if (!k || cmp_kfunc(&v[k - 1], &v[i]))
				v[k++] = v[i];
		*out = arena_zalloc(a, (k + 1) * sizeof(**out));
		if (k)
			memcpy(*out, v, k * sizeof(*v));
		*n = k;
	}
	free(v);
	return err;
}
