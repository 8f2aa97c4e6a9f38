/* Running a host object in the kernel (in libgpux-host.so, which links
 * libbpf): open it from memory, load the kernel programs (the userspace
 * VM's and the drivers' are left out), attach every uprobe, uretprobe
 * and tracepoint, hand over the ring buffer's records, read, clear and
 * zero the maps, and detach. A second run of the same object loads the
 * driver's struct_ops programs instead and registers them with it
 * (host_driver.c). gpux calls these through the module
 * (cli/host_loader.h), so gpux itself links neither LLVM nor libbpf. */
#ifndef GPUX_HOST_LIVE_H
#define GPUX_HOST_LIVE_H

#include <stdbool.h>
#include <stddef.h>

#include "host_obj.h"

struct host_live;

/* A ring buffer record: the bytes as the probe wrote them. */
typedef int (*host_live_rec_fn)(void *arg, const void *data, size_t len);

/* Opens and loads obj, then attaches its kernel programs, uprobes to
 * process pid only when pid > 0. Records go to rec(arg) from
 * host_live_consume. 0 with *out, or -1 with a message in err naming the
 * probe that failed (nothing stays attached). */
int host_live_open(const struct host_obj *obj, int pid, host_live_rec_fn rec,
		   void *arg, struct host_live **out, char *err, size_t errlen);
/* Driver policies (host_driver.c): whether this libbpf can load the
 * struct_ops of a kernel module (1.4 or newer). 0, or -1 saying why in
 * err. */
int host_live_driver_check(char *err, size_t errlen);
/* As host_live_open for obj's struct_ops programs and maps: each
 * struct_ops map registered with the driver through a link; the other
 * maps, the ring buffer included, those of share (the kernel probes'
 * run) where it is not NULL. */
int host_live_open_driver(const struct host_obj *obj, const struct host_live *share,
			  host_live_rec_fn rec, void *arg, struct host_live **out,
			  char *err, size_t errlen);
/* After host_live_open or host_live_open_driver failed because the
 * kernel's verifier refused a program: the span of its probe (the
 * message said why). false otherwise. */
bool host_live_refused(struct span *where);
/* How many probes are attached (for a driver run: struct_ops maps). */
int host_live_attached(const struct host_live *l);
/* A descriptor that polls readable when records wait (-1 if the program
 * writes none). */
int host_live_fd(const struct host_live *l);
/* Hands every waiting record to the callback. 0, or -1. */
int host_live_consume(struct host_live *l);
/* A FUNC+argN watchpoint (program prog of the object) set at addr, once
 * per address (the one it watches already: 0). 0, or -errno: ENOSPC
 * when the process has no debug register left. */
int host_live_watch(struct host_live *l, int prog, uint64_t addr);
/* unwatch(addr): removes every watchpoint at addr. */
void host_live_unwatch(struct host_live *l, uint64_t addr);
/* Destroys the links: no probe fires after it returns. */
void host_live_detach(struct host_live *l);
/* Every element of obj->maps[map] in the layout of output.h's
 * out_entries: per-CPU values merged by the map's aggregation. *kv is
 * malloc'd (NULL when empty). 0, or -1. */
int host_live_map_read(struct host_live *l, int map, unsigned char **kv, size_t *n);
/* The frames of stack id in the stack map of limit frames (limit u64
 * into ips, zeros after the last). 0, or -1 if there is none. */
int host_live_stack(struct host_live *l, unsigned limit, uint32_t id, uint64_t *ips);
/* clear(@m) and zero(@m). 0, or -1. */
int host_live_map_clear(struct host_live *l, int map);
int host_live_map_zero(struct host_live *l, int map);
/* Detaches and frees everything; l may be NULL. */
void host_live_close(struct host_live *l);

#endif
