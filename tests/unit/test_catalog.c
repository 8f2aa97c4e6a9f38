/* Unit tests for the probe catalog, suggestions, tracefs parsing and
 * gpux -l. Prints "N passed, N failed"; exits non-zero on any failure. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arena.h"
#include "catalog.h"
#include "provider.h"
#include "cuda_actions.h"
#include "listing.h"
#include "suggest.h"
#include "tracepoint.h"

static int passed, failed;

#define CHECK(cond) check((cond), #cond, __LINE__)

static bool check(bool ok, const char *what, int line)
{
	if (ok) {
		passed++;
	} else {
		failed++;
		fprintf(stderr, "FAIL line %d: %s\n", line, what);
	}
	return ok;
}

static bool streq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static void test_providers(void)
{
	size_t n;
	const struct provider *const *p = catalog_providers(&n);

	CHECK(n >= 10);
	for (size_t i = 0; i < n; i++) {
		CHECK(p[i]->name && *p[i]->name && p[i]->doc && *p[i]->doc);
		CHECK(catalog_provider(p[i]->name) == p[i]);
		if (p[i]->alias)
			CHECK(catalog_provider(p[i]->alias) == p[i]);
		/* its unit holds it, reads its specs, and says how -l shows it */
		const struct provider_unit *u = p[i]->unit;
		if (!CHECK(u && u->resolve))
			continue;
		CHECK(p[i] >= u->providers && p[i] < u->providers + u->nproviders);
		CHECK((u->usage == NULL) == (p[i]->syntax == SYN_EVENT));
		/* Every provider has its event(s). */
		if (p[i]->syntax != SYN_EVENT) {
			const struct event *e = catalog_event(p[i], NULL);
			CHECK(e && !e->name && e->prov == p[i]);
			CHECK(catalog_event(p[i], "whatever") == e);
		} else {
			CHECK(catalog_event(p[i], NULL) == NULL);
			CHECK(catalog_event(p[i], "no_such_event") == NULL);
		}
		/* a name or alias is one provider's */
		for (size_t j = i + 1; j < n; j++) {
			CHECK(strcmp(p[i]->name, p[j]->name) != 0);
			CHECK(!p[i]->alias || !p[j]->alias || strcmp(p[i]->alias, p[j]->alias));
		}
	}
	CHECK(catalog_provider("u") == catalog_provider("uprobe"));
	CHECK(catalog_provider("w") == catalog_provider("watchpoint"));
	CHECK(catalog_provider("aw")->runner == RUNNER_KERNEL);
	CHECK(catalog_provider("ur") == catalog_provider("uretprobe"));
	CHECK(catalog_provider("t") == catalog_provider("tracepoint"));
	CHECK(catalog_provider("i") == catalog_provider("interval"));
	CHECK(catalog_provider("gdevv") == NULL);
	CHECK(catalog_provider(NULL) == NULL);
	CHECK(catalog_provider("BEGIN")->syntax == SYN_BARE);
	CHECK(catalog_provider("t")->syntax == SYN_TRACEPOINT);
}

static void test_events(void)
{
	size_t n;
	const struct event *const *es = catalog_events(&n);
	const struct provider *gdev = catalog_provider("gdev"), *cuda = catalog_provider("cuda");

	for (size_t i = 0; i < n; i++) {
		const struct event *e = es[i];
		const struct provider *p = e->prov;
		if (!CHECK(p != NULL && catalog_provider(p->name) == p))
			continue;
		CHECK(e >= p->unit->events && e < p->unit->events + p->unit->nevents);
		CHECK(e->place == p->place);
		CHECK((e->name != NULL) == (p->syntax == SYN_EVENT));
		CHECK(e->doc && *e->doc);
		CHECK(e->fields != NULL);
		if (e->name)
			CHECK(catalog_event(p, e->name) == e);
		/* Only driver hooks return decisions; device probes act
		 * by prefetch(addr) alone, cuda: probes by the memory
		 * actions (but cuda:kernel_end, which runs after the
		 * kernel on the runtime's thread), the others not at all. */
		if (e->place != PLACE_DRIVER)
			CHECK(!e->decisions);
		if (p == gdev)
			CHECK(e->actions == ACTION_BIT(ACT_DEV_PREFETCH));
		else if (p == cuda && !strcmp(e->name, "kernel_end"))
			CHECK(!e->actions);
		else if (p == cuda)
			CHECK(e->actions == (ACTION_BIT(ACT_PREFETCH) | ACTION_BIT(ACT_EVICT) |
					     ACTION_BIT(ACT_ADVISE)));
		else if (e->place != PLACE_DRIVER)
			CHECK(!e->actions);
		else
			CHECK(e->decisions & DECISION_BIT(DECISION_DEFAULT));
		CHECK(e->decisions < DECISION_BIT(DECISION_COUNT));
		CHECK(e->actions < ACTION_BIT(ACT_COUNT));
		CHECK(e->filter == FILTER_NONE || p->syntax == SYN_EVENT);

		for (size_t j = i + 1; j < n; j++)
			CHECK(!(es[j]->prov == p && streq(e->name, es[j]->name)));

		for (const struct field *f = e->fields; f->name; f++) {
			CHECK(*f->name && f->doc && *f->doc);
			CHECK(f->type.kind != TY_NONE);
			CHECK(f->type.kind != TY_PTR || f->type.name);
			CHECK(event_field(e, f->name) == f);
			for (const struct field *g = f + 1; g->name; g++)
				CHECK(strcmp(f->name, g->name) != 0);
		}
		CHECK(event_field(e, "no_such_field") == NULL);
	}

	const struct event *acc = catalog_event(gdev, "access");
	CHECK(acc && acc->filter == FILTER_KERNEL);
	const struct field *addr = event_field(acc, "addr");
	CHECK(addr && addr->unif == UNIF_VARYING && addr->type.bits == 64);
	CHECK(event_field(acc, "store")->unif == UNIF_UNIFORM);
	CHECK(catalog_event(gdev, "func_exit")->filter == FILTER_FUNC);

	const struct event *launch =
		catalog_event(catalog_provider("cuda"), "launch");
	CHECK(launch && event_field(launch, "kernel")->type.kind == TY_STR);
	CHECK(event_field(launch, "grid")->type.kind == TY_DIM3);
	const struct event *kend = catalog_event(catalog_provider("cuda"), "kernel_end");
	CHECK(kend && kend->filter == FILTER_KERNEL && kend->place == PLACE_HOST);
	CHECK(event_field(kend, "block")->type.kind == TY_DIM3);
	CHECK(event_field(kend, "duration")->type.bits == 64);

	const struct event *gacc =
		catalog_event(catalog_provider("gpu_mem"), "access");
	CHECK(gacc && gacc->decisions == 7u);
	CHECK(gacc->actions == (ACTION_BIT(ACT_MOVE_HEAD) |
				ACTION_BIT(ACT_MOVE_TAIL)));
	CHECK(streq(event_field(gacc, "chunk")->type.name, "chunk"));
	const struct event *bind =
		catalog_event(catalog_provider("gpu_sched"), "bind");
	CHECK(bind && (bind->actions & ACTION_BIT(ACT_REJECT_BIND)));
	CHECK(!(bind->actions & ACTION_BIT(ACT_SET_TIMESLICE)));
	CHECK(event_field(catalog_event(catalog_provider("u"), NULL), "arg5"));
}

static void test_builtins_actions(void)
{
	size_t n;
	const struct builtin *b = catalog_builtins(&n);

	for (size_t i = 0; i < n; i++) {
		CHECK(b[i].name && b[i].doc && *b[i].doc && b[i].places);
		CHECK((b[i].places & ~(unsigned)PLACE_ANY) == 0);
		CHECK(catalog_builtin(b[i].name) == &b[i]);
	}
	CHECK(catalog_builtin("lane")->unif == UNIF_VARYING);
	CHECK(catalog_builtin("warp")->unif == UNIF_UNIFORM);
	CHECK(catalog_builtin("threadIdx")->type.kind == TY_DIM3);
	CHECK(catalog_builtin("nsecs")->places == PLACE_ANY);
	CHECK(!(catalog_builtin("cpu")->places & PLACE_DEVICE));
	CHECK(catalog_builtin("pid")->places & PLACE_DEVICE);
	CHECK(catalog_builtin("elapsed")->places == PLACE_HOST);
	CHECK(catalog_builtin("nope") == NULL);

	const struct action *a = catalog_actions(&n);
	CHECK(n == ACT_COUNT);
	for (size_t i = 0; i < n; i++) {
		CHECK(a[i].id == (enum action_id)i && a[i].doc);
		/* a shared name is told apart by where it is called */
		CHECK(catalog_action(a[i].name) == &a[i] ||
		      (a[i].id == ACT_DEV_PREFETCH &&
		       catalog_action(a[i].name)->id == ACT_PREFETCH));
		CHECK(a[i].nargs >= 0 && a[i].nargs <= 3);
		CHECK(a[i].hint_arg < a[i].nargs);
	}
	const struct provider *gd = catalog_provider("gdev"), *cu = catalog_provider("cuda");
	CHECK(catalog_action_in("prefetch", catalog_event(gd, "access"))->id == ACT_DEV_PREFETCH);
	CHECK(catalog_action_in("prefetch", catalog_event(cu, "launch"))->id == ACT_PREFETCH);
	CHECK(catalog_action("advise")->hint_arg == 2);
	size_t nh;
	const struct hint_info *hs = catalog_hints(&nh);
	CHECK(nh == GPUX_ADVISE_COUNT);
	for (size_t i = 0; i < nh; i++)
		CHECK(hs[i].value == i && catalog_hint(hs[i].name) == &hs[i] && hs[i].doc);
	CHECK(catalog_hint("READ_MOSTY") == NULL);
	CHECK(catalog_action("set_prefetch_region")->nargs == 2);
	CHECK(catalog_action("reject_bind")->nargs == 0);
	CHECK(streq(catalog_action("move_tail")->args[0].name, "chunk"));

	enum decision d = DECISION_DEFAULT;
	CHECK(catalog_decision("BYPASS", &d) && d == DECISION_BYPASS);
	CHECK(catalog_decision("ENTER_LOOP", &d) && d == DECISION_ENTER_LOOP);
	CHECK(!catalog_decision("bypass", &d));
	CHECK(streq(decision_name(DECISION_DEFAULT), "DEFAULT"));
	CHECK(streq(place_name(PLACE_DRIVER), "driver"));
	CHECK(streq(place_name(PLACE_DEVICE), "device"));
	CHECK(streq(place_name(PLACE_HOST), "host"));
}

static void test_suggest(void)
{
	const char *const events[] = { "kernel_entry", "kernel_exit", "access",
				       "func_entry", "func_exit" };
	const char *const provs[] = { "gdev", "cuda", "uprobe", "BEGIN" };
	const char *const fields[] = { "addr", "size", "store", "atomic" };
	char longw[100];

	memset(longw, 'a', sizeof(longw) - 1);
	longw[sizeof(longw) - 1] = '\0';
	CHECK(streq(suggest_closest("kernel_exti", events, 5), "kernel_exit"));
	CHECK(streq(suggest_closest("kernel_entyr", events, 5),
		    "kernel_entry"));
	CHECK(streq(suggest_closest("gdevv", provs, 4), "gdev"));
	CHECK(streq(suggest_closest("begin", provs, 4), "BEGIN"));
	CHECK(streq(suggest_closest("adr", fields, 4), "addr"));
	CHECK(suggest_closest("zzzzz", provs, 4) == NULL);
	CHECK(suggest_closest("zzzzz", fields, 4) == NULL);
	CHECK(suggest_closest("", fields, 4) == NULL);
	CHECK(suggest_closest(longw, fields, 4) == NULL);
	CHECK(suggest_distance("ab", "ba") == 1);
	CHECK(suggest_distance("", "abc") == 3);
	CHECK(suggest_distance(longw, "a") > SUGGEST_MAX_LEN);
}

static const char fake_format[] =
	"name: fake\nID: 1\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:__data_loc char[] path;\toffset:28;\tsize:4;\tsigned:0;\n"
	"\tfield:const char * name;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:u8 mac[6];\toffset:40;\tsize:6;\tsigned:0;\n"
	"\tfield:unsigned short port;\toffset:46;\tsize:2;\tsigned:0;\n"
	"\nprint fmt: \"%s\", REC->comm\n";

static bool write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return false;
	fputs(text, f);
	return fclose(f) == 0;
}

/* A fake tracefs, so the parser is tested on any machine. */
static void test_tracepoint_fake(void)
{
	char root[] = "/tmp/gpux-tracefs-XXXXXX", path[256];
	struct arena a;
	struct tp_field *tf;
	struct field *f;
	char **names;
	size_t n;

	if (!CHECK(mkdtemp(root) != NULL))
		return;
	const char *const dirs[] = { "events", "events/fake", "events/fake/ev",
				     "events/fake/ev2", "events/ftrace",
				     "events/ftrace/print", "empty" };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
		CHECK(mkdir(path, 0755) == 0);
	}
	snprintf(path, sizeof(path), "%s/events/fake/ev/format", root);
	CHECK(write_file(path, fake_format));
	snprintf(path, sizeof(path), "%s/events/fake/ev2/format", root);
	CHECK(write_file(path, "name: broken\nID: 2\n"));
	snprintf(path, sizeof(path), "%s/events/fake/enable", root);
	CHECK(write_file(path, "0\n"));

	arena_init(&a);
	tracepoint_set_root(root);
	if (CHECK(tracepoint_layout(&a, "fake", "ev", &tf, &n) == 0) &&
	    CHECK(n == 6)) {
		CHECK(streq(tf[0].f.name, "comm") &&
		      tf[0].f.type.kind == TY_STR);
		CHECK(tf[0].offset == 8 && tf[0].size == 16 && tf[0].array);
		CHECK(streq(tf[1].f.name, "pid") && tf[1].f.type.bits == 32 &&
		      tf[1].f.type.is_signed);
		CHECK(streq(tf[2].f.name, "path") && tf[2].dynamic &&
		      tf[2].f.type.kind == TY_STR);
		CHECK(tf[3].f.type.bits == 64 && !tf[3].f.type.is_signed);
		/* an array of integers: its elements, which args.mac[i] reads */
		CHECK(streq(tf[4].f.name, "mac") && tf[4].f.type.kind == TY_ARRAY &&
		      tf[4].f.type.count == 6 && tf[4].f.type.inner &&
		      tf[4].f.type.inner->bits == 8 && !tf[4].f.type.inner->is_signed);
		CHECK(tf[5].f.type.bits == 16 && !tf[5].f.type.is_signed);
		CHECK(streq(tf[1].f.doc, "pid_t pid"));
		CHECK(tf[n].f.name == NULL);
	}
	CHECK(tracepoint_fields(&a, "fake", "ev", &f, &n) == 0 && n == 6 &&
	      f[6].name == NULL);
	CHECK(tracepoint_fields(&a, "fake", "ev2", &f, &n) == -EPROTO);
	CHECK(tracepoint_fields(&a, "fake", "nope", &f, &n) == -ENOENT);
	CHECK(tracepoint_fields(&a, "nope", "ev", &f, &n) == -ENOENT);
	CHECK(tracepoint_list(&a, NULL, &names, &n) == 0 && n == 2 &&
	      streq(names[0], "fake:ev") && streq(names[1], "fake:ev2") &&
	      names[2] == NULL);
	CHECK(tracepoint_list(&a, "ftrace", &names, &n) == 0 && n == 1);
	CHECK(tracepoint_list(&a, "nope", &names, &n) == -ENOENT);

	/* the functions kprobes attach to: each once, sorted, by module */
	snprintf(path, sizeof(path), "%s/available_filter_functions", root);
	CHECK(write_file(path, "vfs_write\nvfs_read\nmod_fn [mod_b]\nvfs_read\n"
				"mod_fn [mod_a]\n__x64_sys_read\nother [mod_a]\n"));
	struct kfunc *kf;
	CHECK(tracefs_functions(&a, "vfs_*", NULL, &kf, &n) == 0 && n == 2 &&
	      streq(kf[0].name, "vfs_read") && !kf[0].module && streq(kf[1].name, "vfs_write") &&
	      kf[2].name == NULL);
	CHECK(tracefs_functions(&a, NULL, NULL, &kf, &n) == 0 && n == 6 &&
	      streq(kf[0].name, "__x64_sys_read") && streq(kf[3].module, "mod_a") &&
	      streq(kf[3].name, "mod_fn") && streq(kf[4].name, "other") &&
	      streq(kf[5].module, "mod_b"));
	CHECK(tracefs_functions(&a, "mod_fn", "mod_b", &kf, &n) == 0 && n == 1 &&
	      streq(kf[0].module, "mod_b"));
	CHECK(tracefs_functions(&a, "*", "mod_?", &kf, &n) == 0 && n == 3);
	CHECK(tracefs_functions(&a, "nope*", NULL, &kf, &n) == 0 && n == 0 && kf[0].name == NULL);
	/* kprobe's unit lists them as probes, a module's by MODULE:FUNCTION */
	const struct provider *kp = catalog_provider("kretprobe");
	struct listed_probe *probes;
	if (CHECK(kp && kp->unit->list) &&
	    CHECK(kp->unit->list(&a, kp, "kretprobe:*_fn", false, &probes, &n) == 0) &&
	    CHECK(n == 2))
		CHECK(streq(probes[0].name, "kretprobe:mod_a:mod_fn") &&
		      streq(probes[1].name, "kretprobe:mod_b:mod_fn") && !probes[0].own);
	CHECK(kp->unit->list(&a, kp, "kretprobe:vfs_*", true, &probes, &n) == 0 && n == 2 &&
	      streq(probes[0].name, "kretprobe:vfs_read"));
	/* tracepoint's: the fake tree's, with their own fields under -v */
	const struct provider *tp = catalog_provider("tracepoint");
	if (CHECK(tp->unit->list(&a, tp, "tracepoint:fake:*", true, &probes, &n) == 0) &&
	    CHECK(n == 2))
		CHECK(streq(probes[0].name, "tracepoint:fake:ev") && probes[0].own &&
		      streq(probes[0].fields[0].name, "comm") && !probes[0].doc &&
		      probes[1].own && !probes[1].fields && probes[1].doc);
	CHECK(tp->unit->list(&a, tp, "tracepoint:fake:e?", false, &probes, &n) == 0 && n == 1 &&
	      !probes[0].own);
	CHECK(tp->unit->list(&a, tp, "tracepoint:nope:*", false, &probes, &n) == 0 && n == 0);

	snprintf(path, sizeof(path), "%s/empty", root);
	tracepoint_set_root(path);
	CHECK(tracefs_functions(&a, NULL, NULL, &kf, &n) == -ENODEV);
	CHECK(tracepoint_fields(&a, "fake", "ev", &f, &n) == -ENODEV);
	CHECK(tracepoint_list(&a, NULL, &names, &n) == -ENODEV);
	tracepoint_set_root(NULL);
	arena_free(&a);

	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK(system(cmd) == 0);
}

static void test_tracepoint_real(void)
{
	struct arena a;
	struct field *f;
	char **names;
	size_t n;

	arena_init(&a);
	CHECK(tracepoint_fields(&a, "../x", "y", &f, &n) == -EINVAL);
	CHECK(tracepoint_fields(&a, "sched", "../x", &f, &n) == -EINVAL);
	CHECK(tracepoint_fields(&a, "a/b", "c", &f, &n) == -EINVAL);
	CHECK(tracepoint_fields(&a, "..", "c", &f, &n) == -EINVAL);
	CHECK(tracepoint_fields(&a, "", "c", &f, &n) == -EINVAL);
	CHECK(tracepoint_fields(&a, NULL, "c", &f, &n) == -EINVAL);
	CHECK(tracepoint_list(&a, "../..", &names, &n) == -EINVAL);

	int r = tracepoint_fields(&a, "sched", "sched_switch", &f, &n);
	if (r == -ENODEV || r == -EACCES) {
		printf("SKIP: tracefs not readable (%s)\n", strerror(-r));
	} else if (CHECK(r == 0)) {
		const struct field *comm = NULL, *pid = NULL;
		for (size_t i = 0; i < n; i++) {
			if (streq(f[i].name, "prev_comm"))
				comm = &f[i];
			if (streq(f[i].name, "prev_pid"))
				pid = &f[i];
			CHECK(strncmp(f[i].name, "common_", 7) != 0);
		}
		CHECK(comm && comm->type.kind == TY_STR);
		CHECK(pid && pid->type.kind == TY_INT && pid->type.bits == 32 &&
		      pid->type.is_signed);
		CHECK(tracepoint_fields(&a, "sched", "no_such_tp", &f, &n) ==
		      -ENOENT);
	}
	arena_free(&a);
}

/* Runs listing_print into a buffer; returns its count. */
static int listing(const char *glob, bool verbose, char **text)
{
	size_t len;
	FILE *m = open_memstream(text, &len);
	if (!m)
		return -1;
	int r = listing_print(m, glob, verbose, false);
	fclose(m);
	return r;
}

static void test_listing(void)
{
	char *t = NULL;

	CHECK(listing("gdev:*", false, &t) == 5);
	CHECK(t && strstr(t, "gdev:kernel_entry\n") && !strstr(t, "cuda:"));
	free(t);
	/* 32, then profile:, the 14 software: and 12 hardware: events and
	 * the 3 iterators */
	CHECK(listing(NULL, false, &t) == 62);
	CHECK(t && strstr(t, "\nkprobe:[MODULE:]FUNCTION\nkretprobe:[MODULE:]FUNCTION\n"));
	CHECK(t && strstr(t, "profile:s:N\n") && strstr(t, "software:cpu-clock\n") &&
	      strstr(t, "hardware:cache-misses\n"));
	CHECK(t && strstr(t, "\niter:task\niter:task_file\niter:task_vma\n"));
	CHECK(t && strstr(t, "uprobe:TARGET:SYMBOL\n") &&
	      strstr(t, "watchpoint:ADDRESS|FUNC+argN:LENGTH:MODE\n") &&
	      strstr(t, "usdt:TARGET:[PROVIDER:]PROBE\n") &&
	      strstr(t, "\nBEGIN\n") && strstr(t, "interval:s:N\n"));
	free(t);
	/* a pattern without a provider matches the kernel's tracepoints too,
	 * however many this machine has */
	CHECK(listing("*access*", false, &t) >= 2);
	CHECK(t && strstr(t, "gdev:access\n") && strstr(t, "gpu_mem:access\n"));
	free(t);
	CHECK(listing("u:*", false, &t) == 1);
	free(t);
	CHECK(listing("nothing:here", false, &t) == 0);
	CHECK(t && !*t);
	free(t);
	CHECK(listing("gdev:access", true, &t) == 1);
	CHECK(t && strstr(t, "addr") && strstr(t, "[lane-varying]") &&
	      strstr(t, "gdev:access:*gemm*") && strstr(t, "threadIdx"));
	free(t);
	CHECK(listing("gpu_mem:access", true, &t) == 1);
	CHECK(t && strstr(t, "BYPASS") && strstr(t, "move_tail(chunk *)") &&
	      !strstr(t, "lane-varying"));
	free(t);
}

int main(void)
{
	test_providers();
	test_events();
	test_builtins_actions();
	test_suggest();
	test_tracepoint_fake();
	test_tracepoint_real();
	test_listing();
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
