/* Ring buffer of the userspace VM (umaps.h): the kernel's BPF ring in
 * one process. Records are {u32 len, u32 flags} and the data padded to
 * 8 bytes. A record never wraps: when it would, a skip record pads to
 * the end and it starts again at offset 0, so readers always see one
 * contiguous record. */
#include <errno.h>
#include <string.h>

#include "umaps.h"

#define REC_SKIP 1u

struct rec_hdr {
	uint32_t len;
	uint32_t flags;
};

int umap_ring_output(struct umap *m, const void *data, uint64_t size)
{
	if (m->type != BPF_M_RINGBUF)
		return -EINVAL;
	uint64_t sz = m->max_entries;
	uint64_t need = 8 + ((size + 7) & ~7ull);
	uint64_t off = m->prod % sz;
	uint64_t pad = off + need > sz ? sz - off : 0;
	if (size > UINT32_MAX || pad + need > sz - (m->prod - m->cons)) {
		m->drops++;
		return -EAGAIN;
	}
	if (pad) {
		struct rec_hdr skip = { (uint32_t)(pad - 8), REC_SKIP };
		memcpy(m->values + off, &skip, sizeof(skip));
		off = 0;
	}
	struct rec_hdr h = { (uint32_t)size, 0 };
	memcpy(m->values + off, &h, sizeof(h));
	memcpy(m->values + off + 8, data, size);
	m->prod += pad + need;
	return 0;
}

int umap_ring_drain(struct umap *m, int (*cb)(void *arg, const void *data, size_t len),
		    void *arg)
{
	if (m->type != BPF_M_RINGBUF)
		return -EINVAL;
	uint64_t sz = m->max_entries;
	int n = 0;
	while (m->cons < m->prod) {
		uint64_t off = m->cons % sz;
		struct rec_hdr h;
		memcpy(&h, m->values + off, sizeof(h));
		m->cons += 8 + (((uint64_t)h.len + 7) & ~7ull);
		if (h.flags & REC_SKIP)
			continue;
		n++;
		if (cb(arg, m->values + off + 8, h.len))
			break;
	}
	return n;
}
