/* Thrashing detection for the UVM model, as nvidia-uvm's
 * uvm_perf_thrashing.c does it (private to sim/; uvm.c calls it).
 *
 * The driver's rules, on one GPU behind PCIe and the CPU:
 * - A block gets per-page tracking only once two migrations into it, to
 *   different processors, come within a lapse (500 us) of each other.
 *   Evictions are not events. So a GPU-only workload never thrashes
 *   here, whatever it evicts: the page has to go GPU -> CPU -> GPU.
 * - A page's migration within a lapse of its previous one counts an
 *   event; the threshold-th in a row marks it thrashing (and the
 *   prefetcher leaves it out). One after a longer gap resets it.
 * - A thrashing page's fault then gets a hint: throttle (the processor
 *   waits a nap, during which one processor, "do not throttle", keeps
 *   the page), or, after pin_threshold throttles, pin: the page stays
 *   where it is pinned and the others map it remotely (no migration).
 * - A pin lasts pin_ns; then the page is unmapped remotely and its
 *   tracking reset. A block without thrashing for an epoch drops its
 *   tracking (max_resets times).
 * Times are the model's clock (uvm_now_ns). */
#ifndef GPUX_SIM_THRASHING_H
#define GPUX_SIM_THRASHING_H

#include <stdbool.h>
#include <stdint.h>

#include "costs.h"
#include "uvm.h"

#define THR_WORDS (SIM_BLOCK_PAGES / 64)

enum thr_proc { THR_GPU = 0, THR_CPU = 1, THR_NOPROC = -1 };
enum thr_hint { THR_HINT_NONE, THR_HINT_THROTTLE, THR_HINT_PIN };

/* uvm_params in nanoseconds, as the driver's va_space params. */
struct thr_params {
	bool enable;
	uint32_t threshold, pin_threshold, max_resets;
	uint64_t lapse_ns, nap_ns, epoch_ns, pin_ns;
};

struct thr_hint_out {
	enum thr_hint type;
	int residency;          /* PIN: where the page stays */
	uint64_t throttle_end;  /* THROTTLE: until when (model ns) */
};

struct thr_block; /* per VA block; NULL until its first migration */

void thr_params_set(struct thr_params *t, const struct uvm_params *p);

/* Pages of mask (THR_WORDS words) migrated to proc at now. 0, or -1
 * when tracking could not be allocated (no detection there, as the
 * driver does without memory). */
int thr_migrated(struct thr_block **tb, const struct thr_params *p, const uint64_t *mask,
		 int proc, uint64_t now, struct uvm_stats *st);
/* The hint for requester's fault on page at now; a PIN is recorded.
 * remote: the block's GPU-remote-mapped pages (cleared for pages whose
 * pin expired). */
struct thr_hint_out thr_hint(struct thr_block *tb, const struct thr_params *p, uint32_t page,
			     int requester, uint64_t now, uint64_t *remote, struct uvm_stats *st);
/* Whether page is still pinned at now (expiring its pin if due). */
bool thr_pinned(struct thr_block *tb, uint32_t page, uint64_t now);
/* The block's thrashing pages, or NULL when none. */
const uint64_t *thr_thrashing(const struct thr_block *tb);
/* The page's range was freed: forget it. */
void thr_forget(struct thr_block *tb, uint32_t page);
void thr_free(struct thr_block *tb);

#endif
