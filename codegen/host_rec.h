/* The records host programs write to the ring buffer map gpux_events
 * (llvm_host.h): a header, then 8-byte aligned arguments. Plain C: the
 * device runtime acts on some of them in the traced process. */
#ifndef GPUX_HOST_REC_H
#define GPUX_HOST_REC_H

#include <stdint.h>

enum host_rec_kind {
	HOST_REC_PRINTF = 1, /* id: format index; then the arguments */
	HOST_REC_EXIT = 2,   /* then i64 status */
	HOST_REC_PRINT = 3,  /* id: map index; then u64 top, u64 div */
	HOST_REC_CLEAR = 4,  /* id: map index */
	HOST_REC_ZERO = 5,   /* id: map index */
	HOST_REC_TIME = 6,   /* id: format index (strftime) */
};

struct host_rec_hdr {
	uint32_t kind;
	uint32_t id;
};

#endif
