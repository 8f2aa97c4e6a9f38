/* The simulator's constants, in one place: the UVM geometry it models
 * and the cost model that turns its counts into an estimated time.
 *
 * Geometry is UVM's own (nvidia-uvm): 4 KiB pages, VA blocks of 2 MiB
 * (512 pages) each backed on the GPU by one 2 MiB root chunk, faults
 * serviced in batches of up to 256 fault-buffer entries, and the
 * prefetcher's threshold of 51% (module parameter
 * uvm_perf_prefetch_threshold).
 *
 * Costs were fitted to an H100 (PCIe Gen5, driver 580) running a
 * managed-memory vector add oversubscribed 1.25x: default UVM moved
 * 9674 MB host-to-device and 5039 MB back in 9146 fault groups in
 * 1747 ms, and with a host prefetch per launch 10244 MB and 6653 MB in
 * 1189 groups in 494 ms. Transfers at ~48 GB/s each way account for
 * ~300 ms of either run; the rest is the service time of fault groups,
 * ~150 us each. bench/sim/README.md compares the model with the real
 * driver per workload. */
#ifndef GPUX_SIM_COSTS_H
#define GPUX_SIM_COSTS_H

#define SIM_PAGE_SHIFT 12
#define SIM_PAGE_SIZE (1u << SIM_PAGE_SHIFT)
#define SIM_BLOCK_SHIFT 21                       /* a VA block, a root chunk */
#define SIM_BLOCK_PAGES (1u << (SIM_BLOCK_SHIFT - SIM_PAGE_SHIFT)) /* 512 */
#define SIM_TREE_LEVELS 10                       /* 512 leaves: levels 0..9 */
#define SIM_FAULT_BATCH 256                      /* distinct faults per batch */
#define SIM_PREFETCH_THRESHOLD 51                /* percent */
/* The prefetcher counts a faulting page's whole 64 KiB big page as
 * populated (uvm_perf_prefetch.c aligns its tree to big pages), so a
 * lone fault migrates 64 KiB: what the H100 moved per random touch. */
#define SIM_BIG_PAGE_PAGES 16

/* Cost model, in integers (the model also runs in kmod/, where the
 * kernel has no floating point): nanoseconds, bytes per nanosecond. */
#define SIM_HTOD_BYTES_PER_NS 48ull /* 48 GB/s */
#define SIM_DTOH_BYTES_PER_NS 48ull
#define SIM_BATCH_NS 150000ull  /* servicing one fault batch */
#define SIM_FAULT_NS 200ull     /* each distinct fault in it */
#define SIM_EVICT_NS 20000ull   /* unmapping and freeing one root chunk */

/* A CPU fault on a page resident on the GPU (a guess, not fitted: the
 * recorded runs have no CPU faults in their timed window). */
#define SIM_CPU_FAULT_NS 10000ull

/* Thrashing detection and mitigation (uvm_perf_thrashing.c): the
 * driver's module parameters uvm_perf_thrashing_* and their defaults,
 * which the H100 of bench/sim ran with. As in the driver, nap, epoch and
 * pin are multiples of the lapse: a page thrashes at its `threshold`-th
 * migration each within 500 us of the one before, is pinned for
 * 300 x 500 us = 150 ms, and a block's thrashing state is dropped after
 * 2000 x 500 us = 1 s without thrashing (at most max_resets times). */
#define UVM_PERF_THRASHING_ENABLE_DEFAULT 1
#define UVM_PERF_THRASHING_THRESHOLD_DEFAULT 3
#define UVM_PERF_THRASHING_THRESHOLD_MAX 7          /* a 3-bit counter */
#define UVM_PERF_THRASHING_PIN_THRESHOLD_DEFAULT 10 /* throttles before a pin */
#define UVM_PERF_THRASHING_PIN_THRESHOLD_MAX 255
#define UVM_PERF_THRASHING_LAPSE_USEC_DEFAULT 500
#define UVM_PERF_THRASHING_NAP_DEFAULT 1            /* x lapse: one throttle */
#define UVM_PERF_THRASHING_NAP_MAX 100
#define UVM_PERF_THRASHING_EPOCH_DEFAULT 2000       /* x lapse */
#define UVM_PERF_THRASHING_PIN_DEFAULT 300          /* x lapse; 0: for good */
#define UVM_PERF_THRASHING_MAX_RESETS_DEFAULT 4
/* The driver's unpinning worker takes pages this close to their deadline. */
#define SIM_THRASHING_TIMER_NS 20000ull

/* Scheduling model (gpu_sched:): NVIDIA's defaults. */
#define SIM_TIMESLICE_US 1024   /* a TSG's default timeslice */
#define SIM_INTERLEAVE_LOW 1    /* runlist entries per TSG by level */
#define SIM_INTERLEAVE_MEDIUM 2
#define SIM_INTERLEAVE_HIGH 4
#define SIM_SWITCH_US 25        /* a context switch between TSGs */

#endif
