/* Value types of the language, as semantic analysis assigns them. */
#ifndef GPUX_TYPES_H
#define GPUX_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum type_kind {
	TY_NONE,  /* not yet known */
	TY_INT,   /* bits + signedness */
	TY_STR,   /* NUL-terminated, bounded */
	TY_DIM3,  /* {x, y, z} of u32, as CUDA's dim3 */
	TY_PTR,   /* opaque handle to a driver object; name says which */
	TY_AGG,   /* an aggregation map value: count(), hist(), ... */
	TY_VOID,  /* a call that returns nothing */
	TY_TUPLE, /* (a, b, ...): elements in tuple */
	TY_USERNAME, /* a user id, printed as the user's name */
	TY_BUF,   /* buf(): bytes with their length, printed with %r */
	TY_TIMESTAMP, /* strftime(): ns since boot, printed with name as format */
	TY_INET,  /* ntop(): an address family and 16 address bytes */
	TY_MACADDR, /* macaddr(): 6 bytes in an integer's first ones */
	TY_ERRNO,   /* strerror(): an error number, printed as its text */
	TY_CGROUP_PATH, /* cgroup_path(): a cgroup id, printed as its directories
			 * (name: the hierarchies' glob, or NULL) */
	TY_POINTER, /* an address in the probed memory; inner: what is there */
	TY_RECORD,  /* a struct or union of the script's C definitions */
	TY_ARRAY,   /* count elements of type inner, back to back */
	TY_STACK, /* ustack/kstack: an integer, (pid << 32) | stack id; the
		   * frames live in a stack trace map, symbolized when printed */
	TY_KSYM,  /* ksym(): a kernel address, printed as its symbol */
	TY_USYM,  /* usym(): a process's address and its pid (USYM_SIZE bytes),
		   * printed as the symbol */
};

/* How a stack prints (bpftrace's modes): "func+off" lines, or perf's
 * "\taddr func+off (module)". */
enum stack_mode {
	STACK_BPFTRACE,
	STACK_PERF,
};
/* Frames of a stack without a limit, as bpftrace's default; the kernel
 * refuses deeper stack maps unless kernel.perf_event_max_stack allows. */
#define STACK_DEFAULT_LIMIT 127

enum agg_kind {
	AGG_NONE,
	AGG_COUNT,
	AGG_SUM,
	AGG_AVG,
	AGG_MIN,
	AGG_MAX,
	AGG_STATS,
	AGG_HIST,
	AGG_LHIST,
};

struct type {
	enum type_kind kind;
	uint8_t bits;
	bool is_signed;
	enum agg_kind agg;
	const char *name; /* TY_PTR: the object kind ("chunk"); TY_TIMESTAMP:
			   * its strftime format */
	const struct type_tuple *tuple; /* TY_TUPLE: its elements */
	const struct type *inner; /* TY_POINTER: the pointee (TY_VOID: none);
				   * TY_ARRAY: the element */
	unsigned count;           /* TY_ARRAY: elements; TY_STR: the bytes of
				   * the char array it was read from, or 0 */
	const struct record *rec; /* TY_RECORD */
	/* TY_POINTER: to the kernel's memory (curtask, ctx, or one read
	 * through such), read as such from any probe; else the probe's
	 * own. TY_RECORD, TY_ARRAY: read from there, so are the pointers
	 * they hold. */
	bool kernel_mem;
	/* TY_STACK: user (ustack) or kernel, its mode and most frames */
	bool user;
	uint8_t stack_mode;
	uint16_t limit;
};

/* A struct or union: its fields at their C offsets (x86-64 layout). */
struct record_field {
	const char *name;
	struct type type;
	unsigned offset;
	/* a bit-field: bit_width bits from bit bit_shift (the lowest) of
	 * the bit_bytes bytes at offset, an integer of type; 0: none */
	uint8_t bit_shift, bit_width, bit_bytes;
};
struct record {
	const char *name; /* "struct rec", "union u" */
	bool is_union;
	bool defined;     /* its body was seen (else only named) */
	unsigned size, align;
	int nfields;
	struct record_field *fields;
};
/* A field of r by name, or NULL. */
const struct record_field *record_field(const struct record *r, const char *name);
/* An integer printed as text: username, strftime(), macaddr(),
 * strerror(), cgroup_path(). */
bool type_prints_as_text(struct type t);
/* A bit-field of width bits from bit bit of its record, read from the
 * fewest bytes (1, 2, 4 or 8) that hold it: bit_shift + width exceeds
 * 8 * bit_bytes only where 8 bytes cannot hold it. */
struct record_field record_bit_field(const char *name, struct type t, unsigned bit,
				     unsigned width);
/* Bytes a value of type t takes in probed memory (C layout). */
unsigned type_mem_size(struct type t);

/* A tuple's elements. In memory (host maps, variables, records) each
 * element takes 8 bytes if an integer, TUPLE_STR_SIZE if a string, its
 * own layout if a tuple, in order, without gaps. */
struct type_tuple {
	int n;
	struct type *elem;
	/* per element, a string's size as sizeof counts it (bpftrace's: a
	 * literal's length, comm's 16); 0 where not a string or not known */
	unsigned *str_size;
};
#define TUPLE_STR_SIZE 64
/* A buf() value in memory: u64 length, then up to BUF_MAX bytes. */
#define BUF_MAX 64
#define BUF_SIZE (8 + BUF_MAX)
/* An ntop() value in memory: u64 family (AF_INET6 or else IPv4), then
 * the address's bytes, 16. */
#define INET_SIZE 24
/* A usym() value in memory: u64 address, u64 pid. */
#define USYM_SIZE 16
/* Whether values of type t are carried as bytes, a size known at
 * compile time (strings, tuples, buf(), ntop(), usym()), not as an integer. */
bool type_is_bytes(struct type t);
/* Bytes of a value of type t in that layout (tuples, strings, integers). */
unsigned tuple_size(struct type t);
/* Where element i of tuple type t starts. */
unsigned tuple_off(struct type t, int i);

#define TYPE_NONE ((struct type){ .kind = TY_NONE })
#define TYPE_VOID ((struct type){ .kind = TY_VOID })
#define TYPE_STR ((struct type){ .kind = TY_STR })
#define TYPE_DIM3 ((struct type){ .kind = TY_DIM3 })
#define TYPE_INT(b, s) ((struct type){ .kind = TY_INT, .bits = (b), .is_signed = (s) })
#define TYPE_I64 TYPE_INT(64, true)
#define TYPE_U64 TYPE_INT(64, false)
#define TYPE_U32 TYPE_INT(32, false)
#define TYPE_AGG(k) ((struct type){ .kind = TY_AGG, .agg = (k) })
#define TYPE_PTR(n) ((struct type){ .kind = TY_PTR, .name = (n) })
#define TYPE_STACK(u, m, n) \
	((struct type){ .kind = TY_STACK, .user = (u), .stack_mode = (m), .limit = (n) })

/* "int64", "uint32", "string", "dim3", "chunk *", "count", "hist"... */
const char *type_str(struct type t, char *buf, size_t len);
bool type_equal(struct type a, struct type b);
/* Values of these types may be stored in one map slot or variable:
 * integers of any width mix (they widen to 64 bits); others must match. */
bool type_compatible(struct type a, struct type b);
/* A variable or map of tuple type into assigned from: each string
 * element's sizeof size becomes the larger of the two (bpftrace's). */
void type_widen_strs(struct type into, struct type from);
/* Parse a cast target: int8..int64, uint8..uint64, s8..s64, u8..u64. */
bool type_from_cast_name(const char *name, struct type *out);
const char *agg_name(enum agg_kind k);
/* How two values of a map of aggregation k combine (an enum
 * gpux_sess_merge of abi/session.h, for gpux_merge_values): count, sum,
 * avg, stats and the histograms add, min and max compare, and other
 * values are the later one's unless additive (only ever added to). */
int agg_merge(enum agg_kind k, bool additive);

#endif
