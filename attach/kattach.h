/* Running a host object in the kernel (in libgpux-host.so, which links
 * libbpf): open it from memory, load the kernel programs (the userspace
 * VM's and the drivers' are left out), attach every uprobe, uretprobe
 * and tracepoint, hand over the ring buffer's records, read, clear and
 * zero the maps, and detach. A second run of the same object loads the
 * driver's struct_ops programs instead and registers them with it
 * (kattach_driver.c). gpux calls these through the module
 * (cli/host_loader.h), so gpux itself links neither LLVM nor libbpf. */
#ifndef GPUX_KATTACH_H
#define GPUX_KATTACH_H

#include <stdbool.h>
#include <stddef.h>

#include "host_obj.h"

struct kattach;

/* A ring buffer record: the bytes as the probe wrote them. */
typedef int (*kattach_rec_fn)(void *arg, const void *data, size_t len);

/* Opens and loads obj, then attaches its kernel programs, uprobes to
 * process pid only when pid > 0. Records go to rec(arg) from
 * kattach_consume. 0 with *out, or -1 with a message in err naming the
 * probe that failed (nothing stays attached). */
int kattach_open(const struct host_obj *obj, int pid, kattach_rec_fn rec,
		   void *arg, struct kattach **out, char *err, size_t errlen);
/* Driver policies (kattach_driver.c): whether this libbpf can load the
 * struct_ops of a kernel module (1.4 or newer). 0, or -1 saying why in
 * err. */
int kattach_driver_check(char *err, size_t errlen);
/* As kattach_open for obj's struct_ops programs and maps: each
 * struct_ops map registered with the driver through a link; the other
 * maps, the ring buffer included, those of share (the kernel probes'
 * run) where it is not NULL. */
int kattach_open_driver(const struct host_obj *obj, const struct kattach *share,
			  kattach_rec_fn rec, void *arg, struct kattach **out,
			  char *err, size_t errlen);
/* After kattach_open or kattach_open_driver failed because the
 * kernel's verifier refused a program: the span of its probe (the
 * message said why). false otherwise. */
bool kattach_refused(struct span *where);
/* After kattach_open failed to attach a program: the span of its probe
 * (the message said why; GPUX_VERIFIER_LOG=1 shows libbpf's own lines
 * too). false otherwise. */
bool kattach_unattached(struct span *where);
/* How many probes are attached (for a driver run: struct_ops maps). */
int kattach_attached(const struct kattach *l);
/* A descriptor that polls readable when records wait (-1 if the program
 * writes none). */
int kattach_fd(const struct kattach *l);
/* Hands waiting records to the callback for 20 ms at most: 0 when none
 * is left, 1 when more may wait, -1 on an error. */
int kattach_consume(struct kattach *l);
/* An iter: program's run: the records are its output, handed over by
 * kattach_consume from the first call after attaching (so after BEGIN)
 * until it has visited every object. */
enum kattach_iter_state {
	KATTACH_NO_ITER,
	KATTACH_ITERATING,
	KATTACH_ITER_DONE,
	KATTACH_ITER_FAILED, /* why in err (may be NULL) */
	KATTACH_ITER_PINNED, /* where in err: its readers run it, not gpux */
};
enum kattach_iter_state kattach_iter_state(const struct kattach *l, char *err, size_t errlen);
/* A FUNC+argN watchpoint (program prog of the object) set at addr, once
 * per address (the one it watches already: 0). 0, or -errno: ENOSPC
 * when the process has no debug register left. */
int kattach_watch(struct kattach *l, int prog, uint64_t addr);
/* unwatch(addr): removes every watchpoint at addr. */
void kattach_unwatch(struct kattach *l, uint64_t addr);
/* Destroys the links: no probe fires after it returns. */
void kattach_detach(struct kattach *l);
/* Every element of obj->maps[map] in the layout of output.h's
 * out_entries: per-CPU values merged by the map's aggregation. *kv is
 * malloc'd (NULL when empty). 0, or -1. */
int kattach_map_read(struct kattach *l, int map, unsigned char **kv, size_t *n);
/* The frames of stack id in the stack map of limit frames (limit u64
 * into ips, zeros after the last). 0, or -1 if there is none. */
int kattach_stack(struct kattach *l, unsigned limit, uint32_t id, uint64_t *ips);
/* One element of map written as BEGIN, END or interval wrote it in
 * gpux's VM: value (the map's layout, per-CPU maps' first CPU, the
 * others zero) for key, or key deleted when value is NULL (a key that
 * is not there, or an array's, is no error). 0, or -1. */
int kattach_map_write(struct kattach *l, int map, const void *key, const void *value);
/* clear(@m) and zero(@m). 0, or -1. */
int kattach_map_clear(struct kattach *l, int map);
int kattach_map_zero(struct kattach *l, int map);
/* Detaches and frees everything; l may be NULL. */
void kattach_close(struct kattach *l);

/* What the running kernel lets BPF do (`gpux --info`), each asked of the
 * kernel by loading a program or map of that kind. */
enum kattach_group { KF_HELPER, KF_FEATURE, KF_MAP, KF_PROG };
struct kattach_feature {
	enum kattach_group group;
	const char *name; /* as bpftrace --info names it */
	bool yes;
};
/* Fills at most max entries; returns how many. */
int kattach_features(struct kattach_feature *out, int max);

#endif
