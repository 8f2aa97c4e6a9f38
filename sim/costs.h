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

/* Cost model (nanoseconds, bytes per second). */
#define SIM_HTOD_BYTES_PER_S 48000000000.0
#define SIM_DTOH_BYTES_PER_S 48000000000.0
#define SIM_BATCH_NS 150000.0   /* servicing one fault batch */
#define SIM_FAULT_NS 200.0      /* each distinct fault in it */
#define SIM_EVICT_NS 20000.0    /* unmapping and freeing one root chunk */

/* Scheduling model (gpu_sched:): NVIDIA's defaults. */
#define SIM_TIMESLICE_US 1024   /* a TSG's default timeslice */
#define SIM_INTERLEAVE_LOW 1    /* runlist entries per TSG by level */
#define SIM_INTERLEAVE_MEDIUM 2
#define SIM_INTERLEAVE_HIGH 4
#define SIM_SWITCH_US 25        /* a context switch between TSGs */

#endif
