#include "compile.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "backend.h"
#include "dev_lower.h"
#include "host_loader.h"
#include "progress.h"
#include "provider.h"
#include "ptx_library.h"

static bool has_place(const struct program *prog, unsigned places)
{
	for (const struct node *p = prog->probes; p; p = p->next)
		if (p->u.probe.place & places)
			return true;
	return false;
}

int compile_check_shared(const struct dev_module *mod, const struct host_obj *obj,
			 struct diags *diags)
{
	int bad = 0;
	for (int i = 0; i < obj->nmaps; i++) {
		if (!obj->maps[i].device || obj->maps[i].mirror)
			continue;
		for (int j = 0; j < mod->nmaps; j++) {
			const struct map_info *mi = mod->map_meta[j].info;
			if (!mod->map_meta[j].written_on_device || strcmp(mi->name, obj->maps[i].name))
				continue;
			struct diag *dg = diag_error(diags, mi->first_use->span, "@%s is written by gdev: "
				   "probes and by cuda: probes: one side may only read it", mi->name);
			diag_hint(dg, "cuda: probes read what gdev: probes write as of the last "
				  "snapshot; gdev: probes read what cuda: probes write as of their launch");
			bad = 1;
		}
	}
	return bad ? -1 : 0;
}

/* Device probes: lower, verify, JIT. The PTX is always generated, so a
 * dry run proves the whole path; only -d ptx and --emit keep it. The
 * module goes back in *mod when it compiled (NULL: not wanted). */
static int compile_device(struct program *prog, const struct options *o,
			  FILE *out, struct dev_module *keep, struct diags *diags)
{
	struct dev_module mod;
	size_t lib_len = 0;
	const char *lib = ptx_helper_library(&lib_len);
	if (o->dump & DUMP_VERIFIER) {
		if (dev_lower(prog, &mod, diags))
			return -1;
		return dev_verify_log(&mod, diags, out);
	}
	progress_set("compiling device probes");
	if (dev_compile(prog, &mod, diags))
		return -1;
	if (o->dump & DUMP_BPF)
		dev_dump_bpf(out, prog, &mod);
	FILE *ptx = (o->dump & DUMP_PTX) ? out : fopen("/dev/null", "w");
	if (!ptx)
		return -1;
	int rc = dev_write_ptx(ptx, &mod, "sm_80", lib, lib_len,
			       PTX_LINK_SAME_MODULE, diags);
	if (ptx != out)
		fclose(ptx);
	if (rc == 0 && o->emit_dir)
		rc = dev_emit_dir(o->emit_dir, prog, &mod, lib, lib_len, diags);
	if (rc == 0 && keep)
		*keep = mod;
	return rc;
}

/* A driver probe's ABI (HOST_DRV_*): its provider's place in its unit,
 * which lists them in that order (providers/gpu_driver.c); -1 for
 * another probe. */
static int drv_abi(const struct provider *p)
{
	if (!p || p->runner != RUNNER_DRIVER)
		return -1;
	long k = p - p->unit->providers;
	return k >= 0 && k < HOST_DRV_N ? (int)k : -1;
}

int compile_driver_abis(const struct program *prog, bool running, struct driver_abis *a,
			struct diags *diags)
{
	memset(a, 0, sizeof(*a));
	const struct node *first[HOST_DRV_N] = { NULL };
	const struct node *any = NULL;
	for (const struct node *p = prog->probes; p; p = p->next)
		for (const struct node *an = p->u.probe.attach; an; an = an->next)
		{
			int k = drv_abi(an->u.attach.prov);
			if (k >= 0 && !first[k]) {
				first[k] = an;
				any = any ? any : an;
			}
		}
	const char *env = getenv("GPUX_BTF_DIR");
	if (!any || (!running && !(env && *env)))
		return 0;
	const struct host_api *host = host_module_open(diags);
	if (!host)
		return -1;
	if (!host->bind_driver) {
		diag_error(diags, any->span, "%s probes need the driver's BTF, which this build "
			   "cannot read: libgpux-host.so was built without libbpf",
			   any->u.attach.prov->name);
		return -1;
	}
	if (host->bind_driver(&a->b)) {
		diag_error_nospan(diags, "out of memory");
		return -1;
	}
	a->bound = true;
	for (int k = 0; k < HOST_DRV_N; k++) {
		if (a->b.abi[k]) {
			a->abis[a->nabis++] = a->b.abi[k];
			continue;
		}
		if (!first[k])
			continue;
		/* one error: the first probe the driver cannot run says why */
		diag_error(diags, first[k]->span, "%s probes need the gpu_ext driver: %s; run the "
			   "policy in the simulator with --sim WORKLOAD",
			   first[k]->u.attach.prov->name, a->b.why[k]);
		compile_driver_abis_free(a);
		return -1;
	}
	return 0;
}

void compile_driver_abis_free(struct driver_abis *a)
{
	const struct host_api *host = a->bound ? host_module_open(NULL) : NULL;
	if (host)
		host->binding_free(&a->b);
	memset(a, 0, sizeof(*a));
}

/* Host and driver probes: LLVM to one BPF object, in the host module.
 * With keep, a clean object is handed back instead of freed. */
static int compile_host(struct program *prog, const struct options *o,
			const struct driver_abis *abis, FILE *out, struct host_obj *keep,
			struct diags *diags)
{
	const struct host_api *host = host_module_open(diags);
	if (!host)
		return -1;
	progress_set("compiling host probes");
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	struct host_opts opts = { .optimize = true,
				  .keep_ir = (o->dump & DUMP_IR) != 0, .cpid = o->cpid,
				  .lib_pid = o->cpid > 0 ? 0 : (int)o->pid,
				  .helper_check = o->helper_check,
				  .start_ns = (uint64_t)now.tv_sec * 1000000000ull +
					      (uint64_t)now.tv_nsec };
	/* the command's program, as bpftrace names it: -c's first word */
	char cmd[PATH_MAX];
	if (o->cmd_argv && o->cmd_argv[0]) {
		opts.cmd = o->cmd_argv[0];
	} else if (o->command) {
		const char *w = o->command + strspn(o->command, " \t");
		snprintf(cmd, sizeof(cmd), "%.*s", (int)strcspn(w, " \t"), w);
		opts.cmd = *cmd ? cmd : NULL;
	}
	if (abis && abis->nabis) {
		opts.abis = abis->abis;
		opts.nabis = abis->nabis;
	}
	struct host_obj obj;
	int rc = host->compile(prog, &opts, &obj, diags);
	if (rc == 0 && (o->dump & DUMP_IR))
		host->print_ir(&obj, out);
	if (rc == 0 && (o->dump & DUMP_BPF))
		rc = host->print_bpf(&obj, &prog->src, out);
	if (rc == 0 && o->emit_dir)
		rc = host->emit(&obj, o->emit_dir, "host", diags);
	if (rc == 0 && keep)
		*keep = obj;
	else
		host_obj_free(&obj);
	return rc;
}

int compile_host_obj(struct program *prog, const struct options *o,
		     const struct driver_abis *abis, struct host_obj *obj,
		     struct diags *diags)
{
	return compile_host(prog, o, abis, stdout, obj, diags);
}

int compile_program(struct program *prog, const struct options *o, FILE *out,
		    struct diags *diags)
{
	int rc = 0;
	if (o->emit_dir && mkdir(o->emit_dir, 0755) && errno != EEXIST) {
		diag_error_nospan(diags, "cannot create %s: %s", o->emit_dir,
				  strerror(errno));
		return -1;
	}
	struct dev_module mod;
	bool dev = false;
	if (has_place(prog, PLACE_DEVICE)) {
		if (compile_device(prog, o, out, &mod, diags))
			rc = -1;
		else
			dev = !(o->dump & DUMP_VERIFIER);
	}
	if (has_place(prog, PLACE_HOST | PLACE_DRIVER)) {
		struct driver_abis abis;
		struct host_obj obj;
		if (compile_driver_abis(prog, false, &abis, diags) ||
		    compile_host(prog, o, &abis, out, &obj, diags)) {
			rc = -1;
		} else {
			/* what a run refuses, a dry run refuses too */
			if ((dev && compile_check_shared(&mod, &obj, diags)) ||
			    run_place_check(prog, &obj, diags))
				rc = -1;
			host_obj_free(&obj);
		}
		compile_driver_abis_free(&abis);
	}
	return rc;
}
