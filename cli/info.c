/* `gpux --info`: what this gpux and this machine can trace, in the
 * sections and words of `bpftrace --info` where the two mean the same,
 * then the GPU. Every answer is asked of the machine: the kernel's by
 * loading a program or map of each kind (through the host module's
 * libbpf), the GPU's through the CUDA driver. */
#include "info.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "gpux_commit.h"
#include "host_dwarf.h"
#include "host_loader.h"
#include "kernel_btf.h"
#include "module_open.h"

static const char *yn(bool b)
{
	return b ? "yes" : "no";
}

static bool have_module(const char *name, char *path, size_t len)
{
	return module_path(name, path, len) == 0;
}

static void print_build(FILE *out, const struct host_api *api)
{
	char path[PATH_MAX];
	fprintf(out, "Build\n  version: v%s%s%s%s\n", GPUX_VERSION, *GPUX_COMMIT ? " (" : "",
		GPUX_COMMIT, *GPUX_COMMIT ? ")" : "");
	fprintf(out, "  host code generator (libgpux-host.so): %s\n", yn(api));
	fprintf(out, "  libbpf: %s\n", yn(api && api->kattach_open));
	fprintf(out, "  libdw (DWARF support): %s\n", yn(host_dwarf_available()));
	fprintf(out, "  device runtime (libgpux-rt.so): %s\n",
		yn(have_module("libgpux-rt.so", path, sizeof(path))));
	fprintf(out, "  exporter (libgpux-export.so): %s\n",
		yn(have_module("libgpux-export.so", path, sizeof(path))));
}

static const char *const group_title[] = {
	[KF_HELPER] = "Kernel helpers",
	[KF_FEATURE] = "Kernel features",
	[KF_MAP] = "Map types",
	[KF_PROG] = "Probe types",
};

/* Lines that do not come from the kernel, at the end of each group:
 * what gpux itself does or lacks. */
static void print_own(FILE *out, enum kattach_group g, bool btf)
{
	switch (g) {
	case KF_HELPER:
		fputs("  skboutput: no\n", out);
		break;
	case KF_FEATURE:
		fprintf(out, "  btf: %s\n", yn(btf));
		fprintf(out, "  uprobe refcount: %s\n",
			yn(access("/sys/bus/event_source/devices/uprobe/format/ref_ctr_offset",
				  F_OK) == 0));
		break;
	case KF_MAP:
		break;
	case KF_PROG:
		/* bpftrace's probe types that gpux does not build */
		fputs("  kfunc: no\n  kprobe_multi: no\n", out);
		break;
	}
}

static void print_kernel(FILE *out, const struct host_api *api)
{
	struct kernel_btf *k = NULL;
	char err[512];
	bool btf = kernel_btf_open(&k, err, sizeof(err)) == 0;
	kernel_btf_close(k);
	if (!api || !api->kattach_features) {
		fputs("\nKernel\n  not asked: this gpux cannot load BPF programs (its host module "
		      "is missing or was built without libbpf)\n", out);
		fprintf(out, "  btf: %s\n", yn(btf));
		return;
	}
	struct kattach_feature f[64];
	int n = api->kattach_features(f, 64);
	for (int g = KF_HELPER; g <= KF_PROG; g++) {
		fprintf(out, "\n%s\n", group_title[g]);
		for (int i = 0; i < n; i++)
			if ((int)f[i].group == g)
				fprintf(out, "  %s: %s\n", f[i].name, yn(f[i].yes));
		print_own(out, (enum kattach_group)g, btf);
	}
}

/* The CUDA driver API's few calls used here, by their C types (CUresult
 * and CUdevice are ints), so the front end needs no CUDA headers. */
typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_int_fn)(int *);
typedef int (*cu_get_fn)(int *, int);
typedef int (*cu_name_fn)(char *, int, int);
typedef int (*cu_attr_fn)(int *, int, int);
#define CC_MAJOR 75 /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
#define CC_MINOR 76

static void print_gpu(FILE *out)
{
	fputs("\nGPU\n", out);
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		fprintf(out, "  CUDA driver: no (%s)\n", e ? e : "libcuda.so.1 cannot be loaded");
		(void)dlerror(); /* glibc frees the message it kept only now */
		return;
	}
	cu_init_fn init = (cu_init_fn)dlsym(h, "cuInit");
	cu_int_fn version = (cu_int_fn)dlsym(h, "cuDriverGetVersion");
	cu_int_fn count = (cu_int_fn)dlsym(h, "cuDeviceGetCount");
	cu_get_fn get = (cu_get_fn)dlsym(h, "cuDeviceGet");
	cu_name_fn name = (cu_name_fn)dlsym(h, "cuDeviceGetName");
	cu_attr_fn attr = (cu_attr_fn)dlsym(h, "cuDeviceGetAttribute");
	int v = 0, n = 0;
	if (!init || !version || !count || !get || !name || !attr || version(&v)) {
		fputs("  CUDA driver: no (libcuda.so.1 lacks the driver API)\n", out);
		dlclose(h);
		return;
	}
	fprintf(out, "  CUDA driver: %d.%d\n", v / 1000, v % 1000 / 10);
	int rc = init(0);
	if (rc || count(&n)) {
		fprintf(out, "  devices: none usable (cuInit: error %d)\n", rc);
		dlclose(h);
		return;
	}
	fprintf(out, "  devices: %d\n", n);
	for (int i = 0; i < n; i++) {
		int dev = 0, major = 0, minor = 0;
		char nm[256] = "?";
		if (get(&dev, i))
			continue;
		name(nm, sizeof(nm), dev);
		attr(&major, CC_MAJOR, dev);
		attr(&minor, CC_MINOR, dev);
		fprintf(out, "  %d: %s (sm_%d%d)\n", i, nm, major, minor);
	}
	/* the driver stays loaded: unloading it after cuInit is not supported */
}

int info_print(FILE *out)
{
	struct utsname u;
	if (uname(&u) == 0)
		fprintf(out, "System\n  OS: %s %s %s\n  Arch: %s\n\n", u.sysname, u.release,
			u.version, u.machine);
	const struct host_api *api = host_module_open(NULL);
	print_build(out, api);
	print_kernel(out, api);
	print_gpu(out);
	return fflush(out) ? 1 : 0;
}
