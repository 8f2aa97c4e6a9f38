/* The UVM model (uvm.h). */
#include "uvm.h"

#include <stdlib.h>
#include <string.h>

#include "costs.h"
#include "thrashing.h"

#define WORDS (SIM_BLOCK_PAGES / 64)
#define NO_CHUNK UINT32_MAX

struct block {
	uint64_t key;            /* tenant << 40 | va >> 21 */
	uint64_t res[WORDS];     /* resident on the GPU */
	uint64_t ever[WORDS];    /* evicted at least once: a fault on it is a refault */
	uint64_t pend[WORDS];    /* faulting in the open batch */
	uint64_t remote[WORDS];  /* pinned in host memory, mapped by the GPU */
	struct thr_block *thr;   /* thrashing detection; NULL until a migration */
	uint32_t chunk;
	uint32_t tenant;
	uint16_t max_first, max_outer;
};

struct chunk {
	uint32_t block;          /* index into blocks, or NO_CHUNK when free */
	uint32_t prev, next;
	enum uvm_list list;
};

struct alloc {
	uint32_t tenant;
	uint64_t va, bytes;
};

struct fault {
	uint32_t block;
	uint16_t page;
};

struct uvm {
	struct uvm_policy pol;
	bool has_pol;
	struct uvm_stats st;
	struct thr_params thr;
	struct chunk *chunks;
	uint32_t nchunks;
	uint32_t *free_stack, nfree;
	uint32_t head[3], tail[3];
	struct block *blocks;
	uint32_t nblocks, capblocks;
	uint32_t *index;         /* open addressing: block index + 1 */
	uint32_t index_cap;      /* a power of two */
	struct alloc *allocs;
	uint32_t nallocs, capallocs;
	struct fault batch[SIM_FAULT_BATCH];
	uint32_t nbatch;
	uint32_t busy_block;     /* being serviced: not evicted */
	/* the open prefetch call */
	bool in_prefetch, region_set;
	uint32_t region_first, region_outer, region_max_first, region_max_outer;
};

/* ---- lists ---- */

static void list_unlink(struct uvm *u, uint32_t c)
{
	struct chunk *k = &u->chunks[c];
	if (k->list == UVM_LIST_NONE)
		return;
	if (k->prev != NO_CHUNK)
		u->chunks[k->prev].next = k->next;
	else
		u->head[k->list] = k->next;
	if (k->next != NO_CHUNK)
		u->chunks[k->next].prev = k->prev;
	else
		u->tail[k->list] = k->prev;
	k->prev = k->next = NO_CHUNK;
	k->list = UVM_LIST_NONE;
}

static void list_push(struct uvm *u, uint32_t c, enum uvm_list l, bool at_head)
{
	list_unlink(u, c);
	struct chunk *k = &u->chunks[c];
	k->list = l;
	if (at_head) {
		k->prev = NO_CHUNK;
		k->next = u->head[l];
		if (u->head[l] != NO_CHUNK)
			u->chunks[u->head[l]].prev = c;
		else
			u->tail[l] = c;
		u->head[l] = c;
	} else {
		k->next = NO_CHUNK;
		k->prev = u->tail[l];
		if (u->tail[l] != NO_CHUNK)
			u->chunks[u->tail[l]].next = c;
		else
			u->head[l] = c;
		u->tail[l] = c;
	}
}

static bool move(struct uvm *u, uint32_t c, bool head)
{
	if (c >= u->nchunks || u->chunks[c].list == UVM_LIST_NONE) {
		u->st.policy_errors++;
		return false;
	}
	list_push(u, c, u->chunks[c].list, head);
	return true;
}

bool uvm_move_head(struct uvm *u, uint32_t chunk) { return move(u, chunk, true); }
bool uvm_move_tail(struct uvm *u, uint32_t chunk) { return move(u, chunk, false); }
void uvm_policy_error(struct uvm *u) { u->st.policy_errors++; }

bool uvm_set_prefetch_region(struct uvm *u, uint32_t first, uint32_t outer)
{
	if (!u->in_prefetch || first > outer || first < u->region_max_first ||
	    outer > u->region_max_outer) {
		u->st.policy_errors++;
		return false;
	}
	u->region_set = true;
	u->region_first = first;
	u->region_outer = outer;
	return true;
}

int uvm_list_chunks(const struct uvm *u, enum uvm_list l, uint32_t *out, int max)
{
	int n = 0;
	for (uint32_t c = u->head[l]; c != NO_CHUNK && n < max; c = u->chunks[c].next)
		out[n++] = c;
	return n;
}

uint64_t uvm_chunk_block(const struct uvm *u, uint32_t chunk)
{
	if (chunk >= u->nchunks || u->chunks[chunk].block == NO_CHUNK)
		return UINT64_MAX;
	return u->blocks[u->chunks[chunk].block].key & ((1ull << 40) - 1);
}

uint32_t uvm_chunk_tenant(const struct uvm *u, uint32_t chunk)
{
	if (chunk >= u->nchunks || u->chunks[chunk].block == NO_CHUNK)
		return 0;
	return u->blocks[u->chunks[chunk].block].tenant;
}

/* ---- setup ---- */

struct uvm *uvm_new(uint64_t gpu_bytes, const struct uvm_policy *policy)
{
	struct uvm *u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	uint64_t n = gpu_bytes >> SIM_BLOCK_SHIFT;
	u->nchunks = n < 2 ? 2 : n > (1u << 24) ? 1u << 24 : (uint32_t)n;
	u->chunks = calloc(u->nchunks, sizeof(*u->chunks));
	u->free_stack = calloc(u->nchunks, sizeof(*u->free_stack));
	u->index_cap = 1024;
	u->index = calloc(u->index_cap, sizeof(*u->index));
	if (!u->chunks || !u->free_stack || !u->index) {
		uvm_free(u);
		return NULL;
	}
	for (int l = 0; l < 3; l++)
		u->head[l] = u->tail[l] = NO_CHUNK;
	for (uint32_t c = 0; c < u->nchunks; c++) {
		u->chunks[c] = (struct chunk){ NO_CHUNK, NO_CHUNK, NO_CHUNK, UVM_LIST_NONE };
		u->free_stack[u->nfree++] = u->nchunks - 1 - c; /* chunk 0 first */
	}
	if (policy) {
		u->pol = *policy;
		u->has_pol = true;
	}
	u->busy_block = NO_CHUNK;
	struct uvm_params prm;
	uvm_params_default(&prm);
	thr_params_set(&u->thr, &prm);
	return u;
}

void uvm_params_default(struct uvm_params *p)
{
	*p = (struct uvm_params){
		.thrashing_enable = UVM_PERF_THRASHING_ENABLE_DEFAULT,
		.thrashing_threshold = UVM_PERF_THRASHING_THRESHOLD_DEFAULT,
		.thrashing_pin_threshold = UVM_PERF_THRASHING_PIN_THRESHOLD_DEFAULT,
		.thrashing_lapse_usec = UVM_PERF_THRASHING_LAPSE_USEC_DEFAULT,
		.thrashing_nap = UVM_PERF_THRASHING_NAP_DEFAULT,
		.thrashing_epoch = UVM_PERF_THRASHING_EPOCH_DEFAULT,
		.thrashing_pin = UVM_PERF_THRASHING_PIN_DEFAULT,
		.thrashing_max_resets = UVM_PERF_THRASHING_MAX_RESETS_DEFAULT,
	};
}

/* The ranges the driver accepts (it falls back to the default; the
 * model refuses). */
bool uvm_params_valid(const struct uvm_params *p)
{
	return p->thrashing_enable <= 1 && p->thrashing_threshold &&
	       p->thrashing_threshold <= UVM_PERF_THRASHING_THRESHOLD_MAX &&
	       p->thrashing_pin_threshold &&
	       p->thrashing_pin_threshold <= UVM_PERF_THRASHING_PIN_THRESHOLD_MAX &&
	       p->thrashing_lapse_usec && p->thrashing_nap &&
	       p->thrashing_nap <= UVM_PERF_THRASHING_NAP_MAX && p->thrashing_epoch;
}

int uvm_set_params(struct uvm *u, const struct uvm_params *p)
{
	if (!uvm_params_valid(p))
		return -1;
	thr_params_set(&u->thr, p);
	return 0;
}

void uvm_free(struct uvm *u)
{
	if (!u)
		return;
	for (uint32_t b = 0; b < u->nblocks; b++)
		thr_free(u->blocks[b].thr);
	free(u->chunks);
	free(u->free_stack);
	free(u->blocks);
	free(u->index);
	free(u->allocs);
	free(u);
}

const struct uvm_stats *uvm_stats(const struct uvm *u) { return &u->st; }
uint64_t uvm_now_ns(const struct uvm *u) { return u->st.time_ps / 1000; }
uint32_t uvm_chunk_count(const struct uvm *u) { return u->nchunks; }

/* ---- allocations: sorted by (tenant, va) ---- */

static int alloc_find(const struct uvm *u, uint32_t tenant, uint64_t va)
{
	uint32_t lo = 0, hi = u->nallocs;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		const struct alloc *a = &u->allocs[mid];
		if (a->tenant < tenant || (a->tenant == tenant && a->va + a->bytes <= va))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < u->nallocs && u->allocs[lo].tenant == tenant && u->allocs[lo].va <= va &&
	    va < u->allocs[lo].va + u->allocs[lo].bytes)
		return (int)lo;
	return -1;
}

void uvm_alloc(struct uvm *u, uint32_t tenant, uint64_t va, uint64_t bytes)
{
	if (!bytes || alloc_find(u, tenant, va) >= 0)
		return;
	if (u->nallocs == u->capallocs) {
		uint32_t cap = u->capallocs ? u->capallocs * 2 : 64;
		struct alloc *a = realloc(u->allocs, cap * sizeof(*a));
		if (!a)
			return; /* an unknown allocation bounds its blocks at 2 MiB */
		u->allocs = a;
		u->capallocs = cap;
	}
	uint32_t i = 0;
	while (i < u->nallocs && (u->allocs[i].tenant < tenant ||
				  (u->allocs[i].tenant == tenant && u->allocs[i].va < va)))
		i++;
	memmove(&u->allocs[i + 1], &u->allocs[i], (u->nallocs - i) * sizeof(*u->allocs));
	u->allocs[i] = (struct alloc){ tenant, va, bytes };
	u->nallocs++;
}

/* ---- blocks ---- */

static uint64_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k;
}

static int index_grow(struct uvm *u)
{
	uint32_t cap = u->index_cap * 2;
	uint32_t *ix = calloc(cap, sizeof(*ix));
	if (!ix)
		return -1;
	for (uint32_t b = 0; b < u->nblocks; b++) {
		uint32_t h = (uint32_t)hash64(u->blocks[b].key) & (cap - 1);
		while (ix[h])
			h = (h + 1) & (cap - 1);
		ix[h] = b + 1;
	}
	free(u->index);
	u->index = ix;
	u->index_cap = cap;
	return 0;
}

static uint32_t block_find(const struct uvm *u, uint64_t key)
{
	uint32_t h = (uint32_t)hash64(key) & (u->index_cap - 1);
	for (; u->index[h]; h = (h + 1) & (u->index_cap - 1))
		if (u->blocks[u->index[h] - 1].key == key)
			return u->index[h] - 1;
	return NO_CHUNK;
}

static uint32_t block_get(struct uvm *u, uint32_t tenant, uint64_t va)
{
	uint64_t key = (uint64_t)tenant << 40 | ((va >> SIM_BLOCK_SHIFT) & ((1ull << 40) - 1));
	uint32_t b = block_find(u, key);
	if (b != NO_CHUNK)
		return b;
	if ((u->nblocks + 1) * 2 > u->index_cap && index_grow(u))
		return NO_CHUNK;
	if (u->nblocks == u->capblocks) {
		uint32_t cap = u->capblocks ? u->capblocks * 2 : 256;
		struct block *nb = realloc(u->blocks, cap * sizeof(*nb));
		if (!nb)
			return NO_CHUNK;
		u->blocks = nb;
		u->capblocks = cap;
	}
	b = u->nblocks++;
	struct block *k = &u->blocks[b];
	memset(k, 0, sizeof(*k));
	k->key = key;
	k->chunk = NO_CHUNK;
	k->tenant = tenant;
	k->max_first = 0;
	k->max_outer = SIM_BLOCK_PAGES;
	int a = alloc_find(u, tenant, va);
	if (a >= 0) {
		uint64_t start = va & ~((1ull << SIM_BLOCK_SHIFT) - 1);
		uint64_t lo = u->allocs[a].va > start ? u->allocs[a].va : start;
		uint64_t end = u->allocs[a].va + u->allocs[a].bytes;
		uint64_t hi = end < start + (1ull << SIM_BLOCK_SHIFT) ? end : start + (1ull << SIM_BLOCK_SHIFT);
		k->max_first = (uint16_t)((lo - start) >> SIM_PAGE_SHIFT);
		k->max_outer = (uint16_t)((hi - start + SIM_PAGE_SIZE - 1) >> SIM_PAGE_SHIFT);
	}
	uint32_t h = (uint32_t)hash64(key) & (u->index_cap - 1);
	while (u->index[h])
		h = (h + 1) & (u->index_cap - 1);
	u->index[h] = b + 1;
	return b;
}

/* ---- bitmaps ---- */

static bool bit(const uint64_t *m, uint32_t i) { return m[i / 64] >> (i % 64) & 1; }
static void set_bit(uint64_t *m, uint32_t i) { m[i / 64] |= 1ull << (i % 64); }

static uint32_t count_range(const uint64_t *m, uint32_t first, uint32_t outer)
{
	uint32_t n = 0;
	for (uint32_t i = first; i < outer;) {
		if (i % 64 == 0 && outer - i >= 64) {
			n += (uint32_t)__builtin_popcountll(m[i / 64]);
			i += 64;
		} else {
			n += bit(m, i);
			i++;
		}
	}
	return n;
}

static uint32_t popcount(const uint64_t *m)
{
	return count_range(m, 0, SIM_BLOCK_PAGES);
}

/* ---- eviction ---- */

static void evict(struct uvm *u, uint32_t c)
{
	struct chunk *k = &u->chunks[c];
	struct block *b = &u->blocks[k->block];
	uint64_t pages = popcount(b->res);
	u->st.dtoh_bytes += pages << SIM_PAGE_SHIFT;
	u->st.time_ps += (pages << SIM_PAGE_SHIFT) * 1000 / SIM_DTOH_BYTES_PER_NS +
			 SIM_EVICT_NS * 1000;
	u->st.evictions++;
	for (int w = 0; w < (int)WORDS; w++) {
		b->ever[w] |= b->res[w];
		b->res[w] = 0;
	}
	b->chunk = NO_CHUNK;
	list_unlink(u, c);
	k->block = NO_CHUNK;
	u->free_stack[u->nfree++] = c;
}

static uint32_t victim(struct uvm *u, enum uvm_list l)
{
	for (uint32_t c = u->head[l]; c != NO_CHUNK; c = u->chunks[c].next)
		if (u->chunks[c].block != u->busy_block)
			return c;
	return NO_CHUNK;
}

/* A free chunk for block b, evicting one if none is free. */
static uint32_t chunk_get(struct uvm *u, uint32_t b)
{
	if (!u->nfree) {
		if (u->has_pol && u->pol.evict_prepare) {
			u->st.hook_calls++;
			u->pol.evict_prepare(u->pol.arg, u, u->blocks[b].tenant);
		}
		uint32_t v = victim(u, UVM_LIST_UNUSED);
		if (v == NO_CHUNK)
			v = victim(u, UVM_LIST_USED);
		if (v == NO_CHUNK)
			return NO_CHUNK;
		evict(u, v);
	}
	uint32_t c = u->free_stack[--u->nfree];
	u->chunks[c].block = b;
	u->blocks[b].chunk = c;
	return c;
}

/* ---- prefetch ---- */

/* The default prefetcher for one faulting page: the largest aligned
 * subregion around it, inside the block's max region, whose populated
 * share passes the threshold (at least the page itself). */
static void default_region(const uint64_t *pop, uint32_t page, uint32_t mf, uint32_t mo,
			   uint32_t *first, uint32_t *outer)
{
	*first = page;
	*outer = page + 1;
	for (uint32_t lvl = 1; lvl < SIM_TREE_LEVELS; lvl++) {
		uint32_t size = 1u << lvl;
		uint32_t f = page & ~(size - 1), o = f + size;
		if (f < mf)
			f = mf;
		if (o > mo)
			o = mo;
		uint32_t n = count_range(pop, f, o);
		if (n * 100 > (o - f) * SIM_PREFETCH_THRESHOLD) {
			*first = f;
			*outer = o;
		}
	}
}

/* The walk when a policy says ENTER_LOOP: each level, leaf to root, is
 * offered to prefetch_iter; one that returns BYPASS with a region set
 * makes that region the result (a later, larger level overrides it). */
static void iter_region(struct uvm *u, const uint64_t *pop, uint32_t page, uint32_t mf,
			uint32_t mo, uint32_t tenant, uint32_t *first, uint32_t *outer)
{
	for (uint32_t lvl = 1; lvl < SIM_TREE_LEVELS; lvl++) {
		uint32_t size = 1u << lvl;
		uint32_t f = page & ~(size - 1), o = f + size;
		if (f < mf)
			f = mf;
		if (o > mo)
			o = mo;
		struct uvm_iter_call c = { lvl, f, o, count_range(pop, f, o), tenant };
		u->region_set = false;
		u->st.hook_calls++;
		if (u->pol.prefetch_iter(u->pol.arg, u, &c) == UVM_BYPASS && u->region_set) {
			*first = u->region_first;
			*outer = u->region_outer;
		}
	}
}

static void region_for(struct uvm *u, struct block *b, const uint64_t *pop, uint32_t page,
		       uint32_t *first, uint32_t *outer)
{
	uint32_t mf = b->max_first, mo = b->max_outer;
	if (!u->has_pol || !u->pol.prefetch) {
		default_region(pop, page, mf, mo, first, outer);
		return;
	}
	struct uvm_prefetch_call c = { page, mf, mo, b->tenant, pop,
					b->key & ((1ull << 40) - 1) };
	u->in_prefetch = true;
	u->region_set = false;
	u->region_max_first = mf;
	u->region_max_outer = mo;
	u->st.hook_calls++;
	int d = u->pol.prefetch(u->pol.arg, u, &c);
	if (d == UVM_BYPASS) {
		*first = u->region_set ? u->region_first : page;
		*outer = u->region_set ? u->region_outer : page + 1;
	} else if (d == UVM_ENTER_LOOP && u->pol.prefetch_iter) {
		*first = u->region_set ? u->region_first : page;
		*outer = u->region_set ? u->region_outer : page + 1;
		iter_region(u, pop, page, mf, mo, b->tenant, first, outer);
	} else {
		default_region(pop, page, mf, mo, first, outer);
	}
	u->in_prefetch = false;
}

/* ---- fault service ---- */

static int fault_cmp(const void *a, const void *b)
{
	const struct fault *x = a, *y = b;
	if (x->block != y->block)
		return x->block < y->block ? -1 : 1;
	return (x->page > y->page) - (x->page < y->page);
}

static void chunk_used(struct uvm *u, uint32_t c, uint32_t tenant, bool fresh)
{
	int d = UVM_DEFAULT;
	if (fresh) {
		list_push(u, c, UVM_LIST_USED, false);
		if (u->has_pol && u->pol.activate) {
			u->st.hook_calls++;
			u->pol.activate(u->pol.arg, u, c, tenant);
		}
		return;
	}
	if (u->has_pol && u->pol.access) {
		u->st.hook_calls++;
		d = u->pol.access(u->pol.arg, u, c, tenant);
	}
	if (d != UVM_BYPASS && u->chunks[c].list != UVM_LIST_NONE)
		list_push(u, c, UVM_LIST_USED, false);
}

/* The thrashing hint for proc's fault on page p. A throttled fault
 * waits out its nap on the model's clock and asks again, as the driver
 * replays it after the nap; still throttled after a few rounds, it is
 * serviced (the model has no other work to run meanwhile). */
static struct thr_hint_out thrash_hint(struct uvm *u, struct block *b, uint32_t p, int proc)
{
	struct thr_hint_out h;
	for (int round = 0;; round++) {
		h = thr_hint(b->thr, &u->thr, p, proc, uvm_now_ns(u), b->remote, &u->st);
		if (h.type != THR_HINT_THROTTLE)
			return h;
		if (round == 8)
			break;
		if (h.throttle_end >= uvm_now_ns(u))
			u->st.time_ps = (h.throttle_end + 1) * 1000;
	}
	h.type = THR_HINT_NONE;
	return h;
}

/* Thrashing's part of a GPU fault service: the faulting pages pinned in
 * host memory are mapped remotely (set in skip: they do not migrate),
 * those pinned on the GPU come as pin updates (set in pin: no thrashing
 * events). How many faults are left to migrate. */
static uint32_t thrash_faults(struct uvm *u, struct block *b, const struct fault *f, uint32_t n,
			      uint64_t *skip, uint64_t *pin)
{
	uint32_t left = n;
	for (uint32_t i = 0; i < n; i++) {
		struct thr_hint_out h = thrash_hint(u, b, f[i].page, THR_GPU);
		if (h.type != THR_HINT_PIN)
			continue;
		if (h.residency == THR_GPU) {
			set_bit(pin, f[i].page);
			continue;
		}
		set_bit(b->remote, f[i].page);
		set_bit(skip, f[i].page);
		u->st.remote_maps++;
		left--;
	}
	return left;
}

static void service_block(struct uvm *u, uint32_t bi, const struct fault *f, uint32_t n)
{
	struct block *b = &u->blocks[bi];
	uint64_t skip[WORDS] = { 0 }, pin[WORDS] = { 0 };
	if (!thrash_faults(u, b, f, n, skip, pin)) {
		/* every fault mapped remotely: nothing migrates */
		memset(b->pend, 0, sizeof(b->pend));
		u->st.faults += n;
		u->st.time_ps += n * SIM_FAULT_NS * 1000;
		return;
	}
	u->busy_block = bi;
	bool fresh = b->chunk == NO_CHUNK;
	if (fresh && chunk_get(u, bi) == NO_CHUNK) {
		u->st.policy_errors++; /* no chunk could be freed: one-chunk GPU */
		u->busy_block = NO_CHUNK;
		return;
	}
	b = &u->blocks[bi]; /* chunk_get never moves blocks, but stay safe */
	/* the prefetcher leaves thrashing pages where they are */
	uint64_t pop[WORDS], mig[WORDS] = { 0 }, keep[WORDS] = { 0 };
	const uint64_t *thrashing = thr_thrashing(b->thr);
	for (int w = 0; w < (int)WORDS; w++)
		keep[w] = skip[w] | (thrashing ? thrashing[w] : 0);
	for (int w = 0; w < (int)WORDS; w++)
		pop[w] = b->res[w] | b->pend[w];
	for (uint32_t i = 0; i < n; i++) {
		uint32_t f0 = f[i].page & ~(SIM_BIG_PAGE_PAGES - 1u);
		for (uint32_t q = f0; q < f0 + SIM_BIG_PAGE_PAGES; q++)
			if (q >= b->max_first && q < b->max_outer)
				set_bit(pop, q);
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t p = f[i].page;
		if (bit(mig, p) || bit(skip, p))
			continue;
		uint32_t first, outer;
		region_for(u, b, pop, p, &first, &outer);
		/* the faulting page always comes, the region beside it */
		set_bit(mig, p);
		for (uint32_t q = first; q < outer; q++)
			if (!bit(keep, q))
				set_bit(mig, q);
	}
	uint64_t moved = 0, pref = 0, events[WORDS] = { 0 };
	for (uint32_t q = 0; q < SIM_BLOCK_PAGES; q++) {
		if (!bit(mig, q) || bit(b->res, q) || bit(b->remote, q))
			continue;
		moved++;
		if (!bit(pin, q))
			set_bit(events, q);
		if (!bit(b->pend, q))
			pref++;
		else if (bit(b->ever, q))
			u->st.refaults++;
		set_bit(b->res, q);
	}
	memset(b->pend, 0, sizeof(b->pend));
	u->st.faults += n;
	u->st.prefetched_pages += pref;
	u->st.htod_bytes += moved << SIM_PAGE_SHIFT;
	u->st.time_ps += (moved << SIM_PAGE_SHIFT) * 1000 / SIM_HTOD_BYTES_PER_NS +
			 n * SIM_FAULT_NS * 1000;
	/* without memory for its tracking a block is not watched (as the
	 * driver does); the model goes on */
	(void)thr_migrated(&b->thr, &u->thr, events, THR_GPU, uvm_now_ns(u), &u->st);
	chunk_used(u, b->chunk, b->tenant, fresh);
	u->busy_block = NO_CHUNK;
}

static void service_batch(struct uvm *u)
{
	if (!u->nbatch)
		return;
	qsort(u->batch, u->nbatch, sizeof(u->batch[0]), fault_cmp);
	for (uint32_t i = 0; i < u->nbatch;) {
		uint32_t j = i;
		while (j < u->nbatch && u->batch[j].block == u->batch[i].block)
			j++;
		service_block(u, u->batch[i].block, &u->batch[i], j - i);
		i = j;
	}
	u->nbatch = 0;
	u->st.batches++;
	u->st.time_ps += SIM_BATCH_NS * 1000;
	if (u->has_pol && u->pol.tick)
		u->pol.tick(u->pol.arg, u);
}

/* The block of tenant's page at va (*bi its index, *page the page in
 * it), made on first touch; NULL, counted as an error, outside any
 * allocation. */
static struct block *touched(struct uvm *u, uint32_t tenant, uint64_t va, uint32_t *bi,
			     uint32_t *page)
{
	*bi = block_get(u, tenant, va);
	if (*bi == NO_CHUNK) {
		u->st.policy_errors++;
		return NULL;
	}
	*page = (uint32_t)(va >> SIM_PAGE_SHIFT) & (SIM_BLOCK_PAGES - 1);
	return &u->blocks[*bi];
}

void uvm_access(struct uvm *u, uint32_t tenant, uint64_t va)
{
	u->st.accesses++;
	uint32_t bi, p;
	struct block *b = touched(u, tenant, va, &bi, &p);
	if (!b)
		return;
	if (bit(b->res, p) || bit(b->pend, p))
		return; /* a hit, or a duplicate of a pending fault */
	if (bit(b->remote, p)) {
		if (thr_pinned(b->thr, p, uvm_now_ns(u)))
			return; /* mapped remotely: no fault */
		b->remote[p / 64] &= ~(1ull << (p % 64)); /* the pin ended */
	}
	set_bit(b->pend, p);
	u->batch[u->nbatch++] = (struct fault){ bi, (uint16_t)p };
	if (u->nbatch == SIM_FAULT_BATCH)
		service_batch(u);
}

void uvm_launch_end(struct uvm *u)
{
	service_batch(u);
}

void uvm_cpu_access(struct uvm *u, uint32_t tenant, uint64_t va)
{
	service_batch(u); /* the GPU's faults come first */
	uint32_t bi, p;
	struct block *b = touched(u, tenant, va, &bi, &p);
	if (!b || !bit(b->res, p))
		return; /* in host memory already */
	u->st.cpu_faults++;
	struct thr_hint_out h = thrash_hint(u, b, p, THR_CPU);
	/* one page comes back; the block keeps its chunk */
	b->res[p / 64] &= ~(1ull << (p % 64));
	u->st.dtoh_bytes += SIM_PAGE_SIZE;
	u->st.time_ps += SIM_PAGE_SIZE * 1000 / SIM_DTOH_BYTES_PER_NS + SIM_CPU_FAULT_NS * 1000;
	if (h.type == THR_HINT_PIN) {
		/* pinned in host memory: the GPU maps it there */
		set_bit(b->remote, p);
		u->st.remote_maps++;
		return;
	}
	uint64_t m[WORDS] = { 0 };
	set_bit(m, p);
	(void)thr_migrated(&b->thr, &u->thr, m, THR_CPU, uvm_now_ns(u), &u->st);
}

void uvm_release(struct uvm *u, uint32_t tenant, uint64_t va, uint64_t bytes)
{
	service_batch(u);
	int a = alloc_find(u, tenant, va);
	if (a >= 0) {
		memmove(&u->allocs[a], &u->allocs[a + 1],
			(u->nallocs - (uint32_t)a - 1) * sizeof(*u->allocs));
		u->nallocs--;
	}
	for (uint64_t off = 0; off < bytes; off += SIM_PAGE_SIZE) {
		uint64_t key = (uint64_t)tenant << 40 |
			       (((va + off) >> SIM_BLOCK_SHIFT) & ((1ull << 40) - 1));
		uint32_t bi = block_find(u, key);
		if (bi == NO_CHUNK)
			continue;
		struct block *b = &u->blocks[bi];
		uint32_t p = (uint32_t)((va + off) >> SIM_PAGE_SHIFT) & (SIM_BLOCK_PAGES - 1);
		b->res[p / 64] &= ~(1ull << (p % 64));
		b->ever[p / 64] &= ~(1ull << (p % 64));
		b->remote[p / 64] &= ~(1ull << (p % 64));
		thr_forget(b->thr, p);
		if (b->chunk != NO_CHUNK && !popcount(b->res)) {
			uint32_t c = b->chunk;
			list_unlink(u, c);
			u->chunks[c].block = NO_CHUNK;
			b->chunk = NO_CHUNK;
			u->free_stack[u->nfree++] = c;
		}
	}
}
