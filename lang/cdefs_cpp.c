/* The script's C parts through the system C preprocessor, as bpftrace
 * reads them through clang: cpp finds the headers and evaluates the
 * conditionals; its line markers tell the script's lines from the
 * headers'.
 *
 * Where the kernel's types come from its BTF, a kernel header this
 * machine lacks (no kernel headers installed: the common case) is read
 * as empty, with a warning at its #include: the types it would define
 * are the kernel's, its macros are not defined. bpftrace 0.17 fails
 * there; scripts written before BPFTRACE_HAVE_BTF then start. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ast.h"
#include "cdecl_priv.h"

/* The script's C part at line (1-based), or NULL. */
static const struct cpart *part_at(const struct program *prog, int line)
{
	for (const struct cpart *cp = prog->cdefs->parts; cp; cp = cp->next)
		if (cp->span.first_line == line)
			return cp;
	return NULL;
}

/* cpp's first error line ("<stdin>:3:10: fatal error: x.h: No such
 * file or directory") into line; its script line, or 0. */
static int first_error(const char *err_path, char *line, size_t len)
{
	line[0] = '\0';
	FILE *f = err_path ? fopen(err_path, "r") : NULL;
	while (f && fgets(line, (int)len, f) && !strstr(line, "error"))
		;
	if (f)
		fclose(f);
	line[strcspn(line, "\n")] = '\0';
	return strncmp(line, "<stdin>:", 8) ? 0 : atoi(line + 8);
}

static void cpp_failed(struct program *prog, struct diags *d, bool ran, const char *err_path)
{
	if (!ran) {
		diag_error_nospan(d, "#include needs the C preprocessor (cpp): install gcc's cpp");
		return;
	}
	char line[512];
	int at = first_error(err_path, line, sizeof(line));
	const char *msg = strstr(line, "error: ");
	msg = msg ? msg + 7 : line;
	/* a missing header in bpftrace's (clang's) words */
	const char *nf = strstr(msg, ": No such file or directory");
	char said[600];
	if (nf && nf > msg) {
		snprintf(said, sizeof(said), "'%.*s' file not found", (int)(nf - msg), msg);
		msg = said;
	}
	const struct cpart *cp = part_at(prog, at);
	if (cp)
		diag_error(d, cp->span, "%s", msg);
	else
		diag_error_nospan(d, "the C preprocessor failed on the script's #include: %s", msg);
}

/* The kernel's own header trees, as <linux/...> names them. */
static bool kernel_header(const char *h)
{
	static const char *const trees[] = {
		"linux/", "net/", "asm/", "asm-generic/", "uapi/", "scsi/", "trace/",
		"xen/", "kvm/", "crypto/", "keys/", "media/", "rdma/", "sound/", "video/",
		"drm/",
	};
	if (strstr(h, "..") || strchr(h, '\'') || h[0] == '/')
		return false;
	for (size_t i = 0; i < sizeof(trees) / sizeof(trees[0]); i++)
		if (!strncmp(h, trees[i], strlen(trees[i])))
			return true;
	return false;
}

/* Empty headers made for a run, removed after it. */
struct stubs {
	char dir[256];
	char *made[64]; /* files and folders, in the order made */
	int n;
};

static bool stub_make(struct stubs *s, const char *path, bool folder)
{
	if (s->n == (int)(sizeof(s->made) / sizeof(s->made[0])))
		return false;
	char *p = strdup(path);
	if (!p)
		return false;
	int rc = 0;
	if (folder) {
		rc = mkdir(p, 0700);
		if (rc && errno == EEXIST) {
			free(p);
			return true;
		}
	} else {
		FILE *f = fopen(p, "wx");
		rc = f ? fclose(f) : -1;
	}
	if (rc) {
		free(p);
		return false;
	}
	s->made[s->n++] = p;
	return true;
}

/* An empty header h under the stubs' folder (made on first use). */
static bool stub_header(struct stubs *s, const char *h)
{
	if (!s->dir[0]) {
		const char *tmp = getenv("TMPDIR");
		if (snprintf(s->dir, sizeof(s->dir), "%s/gpux-kheaders-XXXXXX",
			     tmp && *tmp ? tmp : "/tmp") >= (int)sizeof(s->dir))
			s->dir[0] = '\0';
		if (!s->dir[0] || !mkdtemp(s->dir)) {
			s->dir[0] = '\0';
			return false;
		}
	}
	char path[512];
	if (snprintf(path, sizeof(path), "%s/%s", s->dir, h) >= (int)sizeof(path))
		return false;
	for (char *q = path + strlen(s->dir) + 1; (q = strchr(q, '/')); q++) {
		*q = '\0';
		bool ok = stub_make(s, path, true);
		*q = '/';
		if (!ok)
			return false;
	}
	return stub_make(s, path, false);
}

static void stubs_remove(struct stubs *s)
{
	while (s->n > 0) {
		char *p = s->made[--s->n];
		if (unlink(p))
			rmdir(p);
		free(p);
	}
	if (s->dir[0])
		rmdir(s->dir);
}

/* A kernel header cpp did not find, which the kernel's types stand in
 * for: made empty, said at its #include. */
static bool stand_in(struct program *prog, struct diags *d, const char *err_path,
		     struct stubs *s)
{
	const struct kernel_types *k = prog->kernel_types;
	char line[512], h[256];
	int at = first_error(err_path, line, sizeof(line));
	const char *e = strstr(line, "fatal error: ");
	const char *end = e ? strstr(e, ": No such file or directory") : NULL;
	if (!end || end - (e + 13) >= (long)sizeof(h) || !k || !k->available(prog))
		return false;
	snprintf(h, sizeof(h), "%.*s", (int)(end - (e + 13)), e + 13);
	if (!kernel_header(h) || !stub_header(s, h))
		return false;
	const struct cpart *cp = part_at(prog, at);
	struct span sp = cp ? cp->span : (struct span){ 1, 1, 1, 1 };
	diag_warning(d, sp, "%s: not found; the kernel's types are read from its BTF instead "
		     "(the header's macros are not defined)", h);
	return true;
}

/* One cpp run over in_path: its output (malloc'd), or NULL with its
 * status in *st (-1: not run). */
static char *cpp_once(struct program *prog, const char *in_path, const char *err_path,
		      const char *stub_dir, size_t *outlen, int *st)
{
	const char *dir = prog->src.name ? prog->src.name : "";
	const char *slash = strrchr(dir, '/');
	char incdir[256] = ".";
	if (slash && slash - dir < (long)sizeof(incdir) - 1)
		snprintf(incdir, sizeof(incdir), "%.*s", (int)(slash - dir), dir);
	/* -I DIR, --include FILE: each word quoted for the shell */
	char *opts = arena_printf(&prog->arena, "-I'%s'", incdir);
	/* bpftrace's: scripts include kernel headers only without it */
	const struct kernel_types *k = prog->kernel_types;
	if (k && k->available(prog))
		opts = arena_printf(&prog->arena, "%s -DBPFTRACE_HAVE_BTF", opts);
	for (int i = 0; i < prog->ninclude_dirs; i++)
		opts = arena_printf(&prog->arena, "%s -I'%s'", opts, prog->include_dirs[i]);
	for (int i = 0; i < prog->ninclude_files; i++)
		opts = arena_printf(&prog->arena, "%s -include '%s'", opts, prog->include_files[i]);
	if (stub_dir && stub_dir[0]) /* searched last: a real header wins */
		opts = arena_printf(&prog->arena, "%s -idirafter '%s'", opts, stub_dir);
	char *cmd = arena_printf(&prog->arena, "PATH=${PATH:-/usr/local/bin:/usr/bin:/bin} "
				 "${GPUX_CPP:-cpp} -dD -x c %s - < '%s' 2> '%s'", opts,
				 in_path, err_path ? err_path : "/dev/null");
	FILE *pp = popen(cmd, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	for (int ch; pp && (ch = fgetc(pp)) != EOF;) {
		if (len + 1 >= cap) {
			cap = cap ? cap * 2 : 65536;
			char *nb = realloc(buf, cap);
			if (!nb)
				break;
			buf = nb;
		}
		buf[len++] = (char)ch;
	}
	*st = pp ? pclose(pp) : -1;
	if (!pp || !WIFEXITED(*st) || WEXITSTATUS(*st) != 0) {
		free(buf);
		return NULL;
	}
	*outlen = len;
	return buf;
}

char *cdefs_run_cpp(struct program *prog, struct diags *d, size_t *outlen)
{
	char in_path[] = "/tmp/gpux-cdefs-XXXXXX";
	int fd = mkstemp(in_path);
	if (fd < 0) {
		diag_error_nospan(d, "cannot create a temporary file for #include: %s", strerror(errno));
		return NULL;
	}
	FILE *f = fdopen(fd, "w");
	int line = 1;
	for (struct cpart *cp = prog->cdefs->parts; f && cp; cp = cp->next) {
		/* keep the script's line numbers: blank lines up to the part */
		for (; line < cp->span.first_line; line++)
			fputc('\n', f);
		fwrite(cp->text, 1, cp->len, f);
		for (size_t i = 0; i < cp->len; i++)
			line += cp->text[i] == '\n';
		fputs(cp->directive ? "\n" : ";\n", f);
		line++;
	}
	if (!f || fclose(f)) {
		unlink(in_path);
		diag_error_nospan(d, "cannot write a temporary file for #include");
		return NULL;
	}
	char err_path[] = "/tmp/gpux-cpperr-XXXXXX";
	int efd = mkstemp(err_path);
	if (efd >= 0)
		close(efd);
	struct stubs s = { .n = 0 };
	char *out = NULL;
	int st = 0;
	/* each missing kernel header found is one more run */
	for (int tries = 0; tries < 32; tries++) {
		out = cpp_once(prog, in_path, efd >= 0 ? err_path : NULL, s.dir, outlen, &st);
		if (out || efd < 0 || st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) == 127 ||
		    !stand_in(prog, d, err_path, &s))
			break;
	}
	if (!out)
		cpp_failed(prog, d, st != -1 && !(WIFEXITED(st) && WEXITSTATUS(st) == 127),
			   efd >= 0 ? err_path : NULL);
	stubs_remove(&s);
	unlink(in_path);
	if (efd >= 0)
		unlink(err_path);
	return out;
}
