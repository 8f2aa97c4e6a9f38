/* Userspace BPF maps for the VM (bpf_vm.h): hash, array, their per-CPU
 * forms (one CPU in the VM, so one value per element) and the ring
 * buffer. Storage is fixed at creation: max_entries bounds every map,
 * inserts into a full one fail and are counted as drops. Value memory
 * never moves, so a pointer a program got from a lookup stays valid for
 * the rest of its run (even after a delete, as with the kernel's RCU).
 * Not locked: struct vm serialises access. */
#ifndef GPUX_UMAPS_H
#define GPUX_UMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf_ids.h"

/* Map types: abi/bpf_ids.h; update flags (include/uapi/linux/bpf.h): */
enum { UMAP_ANY = 0, UMAP_NOEXIST = 1, UMAP_EXIST = 2 };

/* Limits on what an object may ask for: a stranger's object must not
 * make the host allocate without bound. */
#define UMAP_MAX_KEY 512
#define UMAP_MAX_VALUE 65536
#define UMAP_MAX_ENTRIES (1u << 20)
#define UMAP_MAX_BYTES (256u << 20)

struct umap {
	char *name;
	uint32_t type, key_size, value_size, max_entries;
	uint32_t stride;   /* value slot: value_size rounded up to 8 */
	uint32_t count;    /* live elements */
	uint64_t drops;    /* inserts refused because the map was full */
	unsigned char *values; /* max_entries * stride (ring: the data) */
	/* hash maps: chained buckets over element slots */
	unsigned char *keys;   /* max_entries * key_size */
	int32_t *heads, *next; /* heads[nbuckets], next[max_entries] */
	uint32_t nbuckets;     /* a power of two */
	unsigned char *used;   /* per slot */
	int32_t free_head;
	/* ring buffer: byte positions, records never wrap (see umaps_ring.c) */
	uint64_t prod, cons;
	/* A hash map bound to a device table (umaps_dev.c): keys and
	 * values point into it, dstate is its state words; not ours.
	 * touch, if set, hears of every slot an operation may change (a
	 * lookup's value may be written through its pointer). */
	uint32_t *dstate;
	void (*touch)(void *arg, uint32_t slot);
	void *touch_arg;
};

/* 0, or -1 with a message in err. */
int umap_init(struct umap *m, const char *name, uint32_t type, uint32_t key_size,
	      uint32_t value_size, uint32_t max_entries, char *err, size_t errlen);
void umap_destroy(struct umap *m);

/* The value of key, or NULL. */
void *umap_lookup(struct umap *m, const void *key);
/* 0 or a negative errno (-EEXIST, -ENOENT, -E2BIG when full, -EINVAL). */
int umap_update(struct umap *m, const void *key, const void *value, uint64_t flags);
int umap_delete(struct umap *m, const void *key);
/* Deletes every element (arrays: zeroes every value). */
void umap_clear(struct umap *m);
/* Sets every value to zero, keeping the keys. */
void umap_zero(struct umap *m);
/* Calls cb for each element in slot order; a nonzero return stops the
 * walk and is returned. cb must not change the map. */
int umap_foreach(struct umap *m, int (*cb)(void *arg, const void *key, const void *value),
		 void *arg);
/* ---- device tables (umaps_dev.c) ---- */
/* Makes hash map m work on a device map's table (abi/gpux_dev.h:
 * open addressing, state words, the device's key hash), in memory the
 * caller owns and keeps for m's life: the device may read and update it
 * while the VM does. Same key and value sizes and max_entries required.
 * 0, or -1 with a message. */
int umap_bind_dev(struct umap *m, void *table, uint32_t key_size, uint32_t value_size,
		  uint32_t max_entries, char *err, size_t errlen);
void *umap_dev_lookup(struct umap *m, const void *key);
int umap_dev_update(struct umap *m, const void *key, const void *value, uint64_t flags);
int umap_dev_delete(struct umap *m, const void *key);
void umap_dev_clear(struct umap *m);
void umap_dev_zero(struct umap *m);
int umap_dev_foreach(struct umap *m, int (*cb)(void *arg, const void *key, const void *value),
		     void *arg);

/* ---- ring buffer (BPF_M_RINGBUF; max_entries is the data size) ---- */
/* Copies one record in; -EAGAIN (and a drop) when there is no room. */
int umap_ring_output(struct umap *m, const void *data, uint64_t size);
/* Calls cb on each record in order and consumes it; a nonzero return
 * stops (that record is consumed). Returns the count of records seen. */
int umap_ring_drain(struct umap *m, int (*cb)(void *arg, const void *data, size_t len),
		    void *arg);

#endif
