/* The simulator command (sim_cmd.h): compile each policy, replay the
 * workload through the model once per policy, print the rows. */
#include "sim_cmd.h"

#include <stdlib.h>
#include <string.h>

#include "bpf_vm.h"
#include "frontend.h"
#include "host_loader.h"
#include "output.h"
#include "records.h"
#include "sim_policy.h"
#include "sources.h"

#define MAX_ROWS 32
#define MAX_PARTS 8

struct row {
	const char *label;
	struct uvm_stats st;
	struct sched_result sched;
	bool has_sched;
	uint64_t failures;
};

/* Only driver probes and gpux's own (BEGIN, END, interval) can run here. */
static int check_probes(struct program *prog, struct diags *d)
{
	int bad = 0;
	for (const struct node *p = prog->probes; p; p = p->next) {
		if (p->u.probe.place & PLACE_DRIVER)
			continue;
		for (const struct node *an = p->u.probe.attach; an; an = an->next) {
			if (an->u.attach.prov->runner == RUNNER_GPUX)
				continue;
			diag_error(d, an->span, "--sim runs driver probes (gpu_mem:, gpu_sched:) "
				   "with BEGIN, END and interval; %s probes need a real program",
				   an->u.attach.prov->name);
			bad = 1;
			break;
		}
	}
	return bad ? -1 : 0;
}

/* Against the ABIs the simulator models, not a driver's. */
static int compile_policy(struct program *prog, struct host_obj *obj, struct diags *d)
{
	const struct host_api *host = host_module_open(d);
	if (!host)
		return -1;
	struct host_opts ho = { .abis = sim_abis, .nabis = sim_nabis, .optimize = true };
	return host->compile(prog, &ho, obj, d);
}

/* Checks prog, refuses probes the simulator cannot run, compiles it and
 * prints the diagnostics once. prog stays the caller's: obj's maps and
 * formats name its text. 0, or -1. */
static int compile_checked(struct program *prog, struct host_obj *obj)
{
	struct diags d;
	diags_init(&d, &prog->arena);
	int rc = frontend_check(prog, &d, FE_STOP_SEMA);
	if (!rc)
		rc = check_probes(prog, &d);
	if (!rc)
		rc = compile_policy(prog, obj, &d);
	diags_print(&d, &prog->src, stderr);
	return rc ? -1 : 0;
}

/* "a.gpx:3+b.gpx": the files and the $N arguments of one row, compiled
 * (*keep: the program, the caller's to free). */
static int compile_row(char *spec, struct host_obj *obj, struct program **keep)
{
	const char *paths[MAX_PARTS];
	char *args[MAX_PARTS * 4];
	int np = 0, na = 0;
	for (char *save = NULL, *part = strtok_r(spec, "+", &save); part;
	     part = strtok_r(NULL, "+", &save)) {
		if (np == MAX_PARTS) {
			fprintf(stderr, "gpux: ERROR: more than %d policies composed in one row\n",
				MAX_PARTS);
			return -1;
		}
		char *colon = strchr(part, ':');
		paths[np++] = part;
		while (colon && na < MAX_PARTS * 4) {
			*colon = 0;
			args[na++] = colon + 1;
			colon = strchr(colon + 1, ':');
		}
	}
	struct source_file files[MAX_PARTS];
	char *text;
	size_t len;
	if (sources_read(paths, np, &text, &len, files))
		return -1;
	struct program *prog = program_new(files[0].name, text, len);
	free(text);
	if (!prog) {
		fputs("gpux: ERROR: out of memory\n", stderr);
		return -1;
	}
	*keep = prog;
	if (np > 1) {
		struct source_file *f = arena_alloc(&prog->arena, sizeof(files[0]) * (size_t)np);
		memcpy(f, files, sizeof(files[0]) * (size_t)np);
		prog->src.files = f;
		prog->src.nfiles = np;
	}
	program_set_args(prog, args, na);
	prog->positional_how = "give it after the policy's file: gpux --sim WORKLOAD policy.gpx:ARG:ARG";
	return compile_checked(prog, obj);
}

/* What a policy prints (printf, print(), its maps at the end), as a run
 * on a driver would: on out, before the table. */
struct row_out {
	FILE *out;
	bool json;
	const struct host_obj *obj;
	struct sim_policy *p;
	struct rec_state rs;
};

static struct vm_map *row_map(struct row_out *o, int map)
{
	return map >= 0 && map < o->obj->nmaps
		       ? vm_map_by_name(sim_policy_vm(o->p), o->obj->maps[map].name)
		       : NULL;
}

static int row_print(void *ctx, int map, uint64_t top, uint64_t div)
{
	struct row_out *o = ctx;
	if (map < 0 || map >= o->obj->nmaps)
		return -1;
	return out_map(o->out, o->json, sim_policy_vm(o->p), &o->obj->maps[map], top, div);
}

static void row_clear(void *ctx, int map)
{
	struct row_out *o = ctx;
	struct vm_map *m = row_map(o, map);
	if (m)
		vm_map_clear(sim_policy_vm(o->p), m);
}

static void row_zero(void *ctx, int map)
{
	struct row_out *o = ctx;
	struct vm_map *m = row_map(o, map);
	if (m)
		vm_map_zero(sim_policy_vm(o->p), m);
}

static int by_map_name(const void *a, const void *b)
{
	return strcmp((*(const struct host_map *const *)a)->name,
		      (*(const struct host_map *const *)b)->name);
}

/* Every map, by name, after END: what a run prints at its exit. */
static void row_maps(struct row_out *o)
{
	const struct host_map **v = malloc(((size_t)o->obj->nmaps + 1) * sizeof(*v));
	if (!v)
		return;
	for (int i = 0; i < o->obj->nmaps; i++)
		v[i] = &o->obj->maps[i];
	qsort(v, (size_t)o->obj->nmaps, sizeof(*v), by_map_name);
	if (o->obj->nmaps && !o->json)
		fputs("\n\n", o->out);
	for (int i = 0; i < o->obj->nmaps; i++)
		out_map(o->out, o->json, sim_policy_vm(o->p), v[i], 0, 0);
	free(v);
	fflush(o->out);
}

/* One policy (NULL: the default) through the whole workload. */
static int run_row(const char *spec, const struct host_obj *obj, struct row *r,
		   struct row_out *ro)
{
	char err[512];
	struct workload *w;
	if (workload_open(spec, &w, err, sizeof(err))) {
		fprintf(stderr, "gpux: ERROR: %s\n", err);
		return -1;
	}
	struct sim_policy *p = NULL;
	const struct wl_tenant *ten;
	int nten = workload_tenants(w, &ten);
	uint64_t gpu = workload_gpu_bytes(w);
	if (!gpu)
		gpu = 1ull << 30;
	struct uvm_policy hooks, *hp = NULL;
	int rc = -1;
	if (obj) {
		if (sim_policy_new(obj, (uint32_t)(gpu >> 21 < 2 ? 2 : gpu >> 21), ten,
				   WL_MAX_TENANTS, &p, err, sizeof(err))) {
			fprintf(stderr, "gpux: ERROR: %s: %s\n", r->label, err);
			goto out;
		}
		ro->obj = obj;
		ro->p = p;
		ro->rs = (struct rec_state){ .out = ro->out, .json = ro->json, .obj = obj };
		ro->rs.maps = (struct rec_maps){ row_print, row_clear, row_zero, ro };
		sim_policy_set_output(p, rec_handle, &ro->rs);
		if (sim_policy_begin(p, err, sizeof(err))) {
			fprintf(stderr, "gpux: ERROR: %s: %s\n", r->label, err);
			goto out;
		}
		sim_policy_uvm_hooks(p, &hooks);
		hp = &hooks;
	}
	struct uvm *u = uvm_new(gpu, hp);
	if (!u) {
		fputs("gpux: ERROR: out of memory\n", stderr);
		goto out;
	}
	/* the spec's driver parameters, checked when it was parsed */
	uvm_set_params(u, workload_uvm_params(w));
	if (p)
		sim_policy_set_model(p, u);
	struct wl_event ev;
	int got;
	while ((got = workload_next(w, &ev)) > 0) {
		switch (ev.kind) {
		case WL_ALLOC: uvm_alloc(u, ev.tenant, ev.va, ev.bytes); break;
		case WL_FREE: uvm_release(u, ev.tenant, ev.va, ev.bytes); break;
		case WL_ACCESS: uvm_access(u, ev.tenant, ev.va); break;
		case WL_LAUNCH: uvm_launch_end(u); break;
		}
	}
	uvm_launch_end(u);
	if (got < 0) {
		fprintf(stderr, "gpux: ERROR: %s: %s\n", spec, workload_error(w));
		uvm_free(u);
		goto out;
	}
	r->st = *uvm_stats(u);
	/* the scheduling model over the workload's tenants */
	nten = workload_tenants(w, &ten);
	uint32_t pids[WL_MAX_TENANTS];
	uint64_t work[WL_MAX_TENANTS];
	for (int i = 0; i < nten; i++) {
		pids[i] = ten[i].pid;
		work[i] = ten[i].work_us;
	}
	struct sched_policy sh, *shp = NULL;
	if (p && sim_policy_has_sched(p)) {
		sim_policy_sched_hooks(p, &sh);
		shp = &sh;
		r->has_sched = true;
	}
	sched_run(pids, work, nten, shp, &r->sched);
	if (p) {
		sim_policy_set_model(p, u);
		if (sim_policy_end(p, err, sizeof(err)))
			fprintf(stderr, "gpux: WARNING: %s: %s\n", r->label, err);
		row_maps(ro);
		const char *first;
		r->failures = sim_policy_failures(p, &first);
		if (r->failures)
			fprintf(stderr, "gpux: WARNING: %s: %llu program runs failed (the default "
				"stood); the first: %s\n", r->label,
				(unsigned long long)r->failures, first);
	}
	uvm_free(u);
	rc = 0;
out:
	sim_policy_free(p);
	workload_close(w);
	return rc;
}

static double mib(uint64_t b) { return (double)b / (1024.0 * 1024.0); }

static void print_text(FILE *out, const char *spec, const struct row *rows, int n,
		       uint64_t gpu)
{
	/* the policy column as wide as its longest name (a path), 28 at least */
	int w = 28;
	for (int i = 0; i < n; i++)
		if ((int)strlen(rows[i].label) > w)
			w = (int)strlen(rows[i].label);
	fprintf(out, "workload %s, GPU memory %.0f MiB\n\n", spec, mib(gpu));
	fprintf(out, "%-*s %10s %8s %10s %10s %9s %9s %10s %10s %9s %10s %7s\n", w, "policy",
		"faults", "batches", "htod_MiB", "dtoh_MiB", "evictions", "refaults", "prefetched",
		"est_ms", "speedup", "hooks", "errors");
	for (int i = 0; i < n; i++) {
		const struct uvm_stats *s = &rows[i].st;
		double ms = (double)s->time_ps / 1e9;
		double base = (double)rows[0].st.time_ps / 1e9;
		fprintf(out, "%-*s %10llu %8llu %10.1f %10.1f %9llu %9llu %10llu %10.2f %8.2fx "
			"%10llu %7llu\n",
			w, rows[i].label, (unsigned long long)s->faults,
			(unsigned long long)s->batches, mib(s->htod_bytes), mib(s->dtoh_bytes),
			(unsigned long long)s->evictions, (unsigned long long)s->refaults,
			(unsigned long long)s->prefetched_pages, ms, ms > 0 ? base / ms : 1.0,
			(unsigned long long)s->hook_calls, (unsigned long long)s->policy_errors);
	}
	bool sched = false;
	for (int i = 0; i < n; i++)
		sched |= rows[i].has_sched;
	if (!sched)
		return;
	fprintf(out, "\n%-*s %-16s %12s %10s %10s %9s\n", w, "policy", "tenant", "timeslice_us",
		"interleave", "finish_ms", "bound");
	for (int i = 0; i < n; i++)
		for (int t = 0; t < rows[i].sched.ntsg; t++) {
			const struct sched_tsg *g = &rows[i].sched.tsg[t];
			fprintf(out, "%-*s %-16u %12llu %10u %10.2f %9s\n", w, rows[i].label, g->tenant,
				(unsigned long long)g->timeslice_us, g->interleave,
				g->finish_us / 1e3, g->rejected ? "rejected" : "yes");
		}
}

static void print_json(FILE *out, const char *spec, const struct row *rows, int n,
		       uint64_t gpu)
{
	for (int i = 0; i < n; i++) {
		const struct uvm_stats *s = &rows[i].st;
		fprintf(out, "{\"type\": \"sim\", \"data\": {\"policy\": \"%s\", \"workload\": \"%s\", "
			"\"gpu_bytes\": %llu, \"accesses\": %llu, \"faults\": %llu, "
			"\"batches\": %llu, \"htod_bytes\": %llu, \"dtoh_bytes\": %llu, "
			"\"evictions\": %llu, \"refaults\": %llu, \"prefetched_pages\": %llu, "
			"\"hook_calls\": %llu, \"policy_errors\": %llu, \"est_ms\": %.3f",
			rows[i].label, spec, (unsigned long long)gpu,
			(unsigned long long)s->accesses, (unsigned long long)s->faults,
			(unsigned long long)s->batches, (unsigned long long)s->htod_bytes,
			(unsigned long long)s->dtoh_bytes, (unsigned long long)s->evictions,
			(unsigned long long)s->refaults, (unsigned long long)s->prefetched_pages,
			(unsigned long long)s->hook_calls, (unsigned long long)s->policy_errors,
			(double)s->time_ps / 1e9);
		if (rows[i].has_sched) {
			fputs(", \"tenants\": [", out);
			for (int t = 0; t < rows[i].sched.ntsg; t++) {
				const struct sched_tsg *g = &rows[i].sched.tsg[t];
				fprintf(out, "%s{\"pid\": %u, \"timeslice_us\": %llu, \"interleave\": %u, "
					"\"finish_us\": %llu, \"rejected\": %s}", t ? ", " : "",
					g->tenant, (unsigned long long)g->timeslice_us, g->interleave,
					(unsigned long long)g->finish_us, g->rejected ? "true" : "false");
			}
			fputc(']', out);
		}
		fputs("}}\n", out);
	}
}

int sim_command(const struct options *o, FILE *out)
{
	char err[512];
	struct workload *w;
	if (workload_open(o->sim, &w, err, sizeof(err))) {
		fprintf(stderr, "gpux: ERROR: --sim: %s\n", err);
		return 1;
	}
	uint64_t gpu = workload_gpu_bytes(w);
	if (!gpu)
		gpu = 1ull << 30;
	workload_close(w);
	int n = o->nmore_files + 1 + (o->program ? 1 : 0);
	if (n > MAX_ROWS) {
		fprintf(stderr, "gpux: ERROR: --sim compares at most %d policies\n", MAX_ROWS - 1);
		return 1;
	}
	struct row *rows = calloc((size_t)n, sizeof(*rows));
	if (!rows)
		return 1;
	int rc = 0;
	struct row_out ro = { .out = out, .json = o->format == FMT_JSON };
	rows[0].label = "default";
	if (run_row(o->sim, NULL, &rows[0], &ro))
		rc = 1;
	for (int i = 1; !rc && i < n; i++) {
		bool e = o->program && i == n - 1;
		rows[i].label = e ? "-e" : o->more_files[i - 1];
		struct host_obj obj;
		memset(&obj, 0, sizeof(obj));
		struct program *prog = NULL;
		int crc;
		if (e) {
			prog = program_new("stdin", o->program, strlen(o->program));
			crc = prog ? compile_checked(prog, &obj) : -1;
		} else {
			char *spec = strdup(rows[i].label);
			crc = spec ? compile_row(spec, &obj, &prog) : -1;
			free(spec);
		}
		/* several policies: whose output follows */
		if (!crc && n > 2 && !ro.json)
			fprintf(out, "%s%s:\n", i > 1 ? "\n" : "", rows[i].label);
		if (crc || run_row(o->sim, &obj, &rows[i], &ro))
			rc = 1;
		host_obj_free(&obj);
		if (prog)
			program_free(prog);
	}
	if (!rc) {
		if (o->format == FMT_JSON)
			print_json(out, o->sim, rows, n, gpu);
		else {
			if (n > 1) /* after what the policies printed */
				fputc('\n', out);
			print_text(out, o->sim, rows, n, gpu);
		}
	}
	free(rows);
	return rc;
}
