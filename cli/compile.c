#include "compile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dev_lower.h"
#include "host_loader.h"
#include "ptx_library.h"

static bool has_place(const struct program *prog, unsigned places)
{
	for (const struct node *p = prog->probes; p; p = p->next)
		if (p->u.probe.place & places)
			return true;
	return false;
}

/* Device probes: lower, verify, JIT. The PTX is always generated, so a
 * dry run proves the whole path; only -d ptx and --emit keep it. */
static int compile_device(struct program *prog, const struct options *o,
			  FILE *out, struct diags *diags)
{
	struct dev_module mod;
	size_t lib_len = 0;
	const char *lib = ptx_helper_library(&lib_len);
	if (o->dump & DUMP_VERIFIER) {
		if (dev_lower(prog, &mod, diags))
			return -1;
		return dev_verify_log(&mod, diags, out);
	}
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
	return rc;
}

/* Host and driver probes: LLVM to one BPF object, in the host module.
 * With keep, a clean object is handed back instead of freed. */
static int compile_host(struct program *prog, const struct options *o,
			FILE *out, struct host_obj *keep, struct diags *diags)
{
	const struct host_api *host = host_module_open(diags);
	if (!host)
		return -1;
	struct host_opts opts = { .optimize = true,
				  .keep_ir = (o->dump & DUMP_IR) != 0, .cpid = o->cpid,
				  .lib_pid = o->cpid > 0 ? 0 : (int)o->pid };
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
		host->obj_free(&obj);
	return rc;
}

int compile_host_obj(struct program *prog, const struct options *o,
		     struct host_obj *obj, struct diags *diags)
{
	return compile_host(prog, o, stdout, obj, diags);
}

void compile_host_obj_free(struct host_obj *obj)
{
	const struct host_api *host = host_module_open(NULL);
	if (host)
		host->obj_free(obj);
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
	if (has_place(prog, PLACE_DEVICE) && compile_device(prog, o, out, diags))
		rc = -1;
	if (has_place(prog, PLACE_HOST | PLACE_DRIVER) &&
	    compile_host(prog, o, out, NULL, diags))
		rc = -1;
	return rc;
}
