/* Contract between host programs and their readers: the records host
 * programs write to the ring buffer map HOST_EVENTS_MAP, a header, then
 * 8-byte aligned arguments.
 *   Writer: the BPF code host lowering emits (codegen/host_output.c),
 *   run in the kernel, in gpux's VM or in a traced process's VM.
 *   Readers: the controller (output/records.c) formats them; the runtime
 *   (runtime/rt_host_out.c) acts on some in the traced process and
 *   forwards the rest through the session segment.
 * The argument layouts per format and map are in struct host_obj
 * (object/host_obj.h), which only the controller reads. */
#ifndef GPUX_HOST_REC_H
#define GPUX_HOST_REC_H

#include <stdint.h>

#define HOST_EVENTS_MAP "gpux_events"

enum host_rec_kind {
	HOST_REC_PRINTF = 1, /* id: format index; then the arguments */
	HOST_REC_EXIT = 2,   /* then i64 status */
	HOST_REC_PRINT = 3,  /* id: map index; then u64 top, u64 div */
	HOST_REC_CLEAR = 4,  /* id: map index */
	HOST_REC_ZERO = 5,   /* id: map index */
	HOST_REC_TIME = 6,   /* id: format index (strftime) */
	HOST_REC_JOIN = 7,   /* id: format index (the delimiter); then u64 n
			      * and HOST_JOIN_MAX strings of HOST_JOIN_STR
			      * bytes, the first n of them read */
	HOST_REC_WATCH = 8,   /* id: a watchpoint program's index in the
			       * object; then u64 address: set it there. Its
			       * setup probe has stopped the process (SIGSTOP)
			       * unless the program is asynchronous */
	HOST_REC_UNWATCH = 9, /* then u64 address: remove every watchpoint there */
	HOST_REC_HELPER_ERR = 10, /* id: the call's site (host_obj.sites); then
				   * i64 what the helper returned (-k, -kk) */
	HOST_REC_CEV = 11, /* id: a cuda: event (enum gpux_cev); then struct
			    * host_rec_cev and the event's context whole
			    * (abi/cuda_events.h): sent by the runtime
			    * itself in a session with GPUX_SESS_TIMELINE */
};

/* Who and when, for a timeline, of a HOST_REC_CEV record: what the
 * probes' nsecs, pid, tid, gpu and comm would read at the event. */
struct host_rec_cev {
	uint64_t ns;
	uint32_t pid, tid;
	uint32_t gpu, pad;
	char comm[16];
};

/* join(argv): bpftrace 0.17's limits, 16 strings of up to 1 KiB; the
 * record is built in HOST_JOIN_MAP, a per-CPU scratch value. */
#define HOST_JOIN_MAP "gpux_join"
#define HOST_JOIN_MAX 16
#define HOST_JOIN_STR 1024
#define HOST_JOIN_BYTES (16 + HOST_JOIN_MAX * HOST_JOIN_STR)

struct host_rec_hdr {
	uint32_t kind;
	uint32_t id;
};

#endif
