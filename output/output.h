/* Output of a running session in bpftrace 0.17's formats, text or
 * (json set) its -f json NDJSON: printf and time() records, and map
 * printing (print(), and every map at exit).
 * The compiled program (object/host_obj.h) describes records and map layouts; the
 * values live in the userspace BPF VM (bpf_vm.h). */
#ifndef GPUX_OUTPUT_H
#define GPUX_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bpf_vm.h"
#include "host_obj.h"

/* Formats a printf record (header included, len bytes) with fmt: C printf
 * conversions, integers 32-bit unless an l/ll/j/z length says 64 (as
 * bpftrace 0.17 passes them), strings as the record's char arrays. */
void out_printf(FILE *out, bool json, const struct host_fmt *fmt,
		const unsigned char *rec, size_t len);
/* A printf record's text (malloc'd, *n bytes), or NULL. */
char *out_format(const struct host_fmt *fmt, const unsigned char *rec, size_t len,
		 size_t *n);
/* {"type": "TYPE", "data": "TEXT"}, TEXT escaped. */
void out_text_record(FILE *out, const char *type, const char *s, size_t n);
/* cat() and system() records (output_actions.c): the file's contents, the
 * command's output, as bpftrace 0.17 prints them (json: "cat" and
 * "syscall" records); a file that cannot be read is an error on stderr. */
void out_cat(FILE *out, bool json, const struct host_fmt *fmt, const unsigned char *rec,
	     size_t len);
void out_system(FILE *out, bool json, const struct host_fmt *fmt, const unsigned char *rec,
		size_t len);
/* A tuple value laid out as struct type_tuple says: (1, ab, (2, 3)), in
 * json [1,"ab",[2,3]], as bpftrace 0.17 prints them. */
void out_tuple(FILE *out, bool json, struct type t, const unsigned char *p);
/* A record or array value of the C definitions (output_cvalue.c). */
void out_cvalue(FILE *out, bool json, struct type t, const unsigned char *p);
/* The same as part of a map key, as bpftrace 0.17 prints one: records
 * without spaces ({.a=1,.b=x}), pointers in hex. */
void out_ckey(FILE *out, struct type t, const unsigned char *p);
/* join(): a HOST_REC_JOIN record's strings with delim between them. */
void out_join(FILE *out, bool json, const char *delim, const unsigned char *rec, size_t len);
/* A buf() value as %r prints it: printable ASCII as it is, other bytes
 * as \xNN. */
void out_buf(FILE *out, const unsigned char *p);
/* A macaddr() value as 67:70:75:78:09:62, into buf. */
const char *out_macaddr(uint64_t v, char *buf, size_t len);
/* strerror()'s text for error number v. */
const char *out_strerror(int64_t v);
/* An ntop() value (INET_SIZE bytes at p) as text, into buf. */
const char *out_inet(const unsigned char *p, char *buf, size_t len);
/* strftime(fmt) of a time in ns since boot, into buf ("" if too long). */
const char *out_timestamp(const char *fmt, uint64_t ns, char *buf, size_t len);
/* The name of user uid into buf (its number when it has none). */
const char *out_username(uint64_t uid, char *buf, size_t len);
/* time(fmt): the local wall time through strftime. */
void out_time(FILE *out, bool json, const char *fmt);
/* "Attaching N probes..." or its json record. */
void out_attached(FILE *out, bool json, int nprobes);
/* print(@m, top, div): top 0 prints every element, div 0 means 1.
 * 0, or -1 if the map is missing from the VM or memory ran out. */
int out_map(FILE *out, bool json, struct vm *vm, const struct host_map *hm,
	    uint64_t top, uint64_t div);
/* Map elements laid out as the VM holds them: n entries of ks + vs bytes
 * (a bucket map's key ends with its u64 bucket index, one entry per
 * bucket; min/max/avg/stats values are {value or sum, set or count}). */
struct out_entries {
	unsigned char *kv;
	size_t n, ks, vs;
};
/* out_map's printing from collected elements, which it may reorder:
 * device maps (cli/dev_print.h) print through it too. 0, or -1 if memory
 * ran out. */
int out_map_entries(FILE *out, bool json, const struct host_map *hm,
		    const struct out_entries *e, uint64_t top, uint64_t div);
/* The elements of hm as the VM holds them, into e (e->kv is malloc'd,
 * the caller frees it). 0, or -1 if the map is missing or memory ran out. */
int out_map_read(struct vm *vm, const struct host_map *hm, struct out_entries *e);
/* One component (j of hm->nkeys) of an element's key, and a value
 * (div 1; not a bucket map's), as print() writes them: what a metrics
 * exporter labels its series with. */
void out_map_key_part(FILE *out, const struct host_map *hm, int j, const unsigned char *key);
void out_map_value(FILE *out, const struct host_map *hm, const unsigned char *val);
/* s[0..n) as a json string, quoted, escaped as bpftrace 0.17 does:
 * bytes from 0x80 up too, as \uffffffXX (it tests a signed char). */
void out_json_str(FILE *out, const char *s, size_t n);

#endif
