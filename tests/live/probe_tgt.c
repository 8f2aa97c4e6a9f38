/* Target of the live probe tests: calls gpux_tgt_add N times (default
 * 5; argv[1]) and getppid() N times, and fires its USDT probes N times
 * (where sys/sdt.h is installed); a second argument sleeps that many
 * seconds first (for -p), a third that many seconds after, a fourth
 * that many milliseconds between its two watched calls (gpux_watch).
 * `probe_tgt wpcheck` exits 0 where the kernel sets hardware watchpoints
 * (the watchpoint cases skip elsewhere). */
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<sys/sdt.h>)
#include <sys/sdt.h>
#define TGT_USDT 1
void usdt_guarded(int i); /* probe_tgt_sema.c */
#endif
#endif

/* Data objects for uaddr(): read as their size says */
__attribute__((used)) int gpux_tgt_int = 0x12345678;
__attribute__((used)) short gpux_tgt_short = -2;
__attribute__((used)) long gpux_tgt_long = 0x1122334455667788;

__attribute__((noinline, used)) long gpux_tgt_add(long a, long b)
{
	__asm__ volatile("" ::: "memory");
	return a + b;
}

/* More arguments than registers: sarg0 and sarg1 are g and h (x86-64) */
__attribute__((noinline, used)) long gpux_stack_args(long a, long b, long c, long d, long e,
						     long f, long g, long h)
{
	__asm__ volatile("" ::: "memory");
	return a + b + c + d + e + f + g * h;
}

/* Bytes and their length, for buf() */
__attribute__((noinline, used)) long gpux_bytes(const char *p, long n)
{
	__asm__ volatile("" ::: "memory");
	return p[0] + n;
}

/* A linked record, for struct definitions, casts, -> and indexing */
struct gpux_rec {
	int id;
	short kind;
	char name[12];
	long vals[3];
	unsigned char flag;
	struct gpux_rec *next;
};

__attribute__((noinline, used)) long gpux_walk(const struct gpux_rec *r, const int *nums)
{
	__asm__ volatile("" ::: "memory");
	return r->id + nums[0];
}

/* A call chain of known names, for ustack: main -> gpux_stack_top ->
 * gpux_stack_mid -> gpux_stack_leaf; work after each call keeps it a
 * call (no tail call) */
__attribute__((noinline, used)) long gpux_stack_leaf(long n)
{
	__asm__ volatile("" ::: "memory");
	return n * 3;
}

__attribute__((noinline, used)) long gpux_stack_mid(long n)
{
	long r = gpux_stack_leaf(n + 1);
	__asm__ volatile("" ::: "memory");
	return r + 1;
}

__attribute__((noinline, used)) long gpux_stack_top(long n)
{
	long r = gpux_stack_mid(n + 1);
	__asm__ volatile("" ::: "memory");
	return r + 1;
}

/* For watchpoints: n read-modify-writes of *p (watchpoint:gpux_watch+arg0) */
__attribute__((noinline, used)) void gpux_watch(volatile long *p, long n)
{
	for (long i = 0; i < n; i++)
		*p += i + 1;
}

/* The page the watchpoint cases watch by address: one no ASLR moves */
#define TGT_WATCH_PAGE ((void *)0x10000000)

static int wpcheck(void)
{
	static volatile long x;
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_BREAKPOINT;
	a.size = sizeof(a);
	a.bp_type = HW_BREAKPOINT_W;
	a.bp_addr = (unsigned long)&x;
	a.bp_len = sizeof(x);
	a.sample_period = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0)
		return 1;
	close(fd);
	return 0;
}

/* Twice over the fixed page, gap_ms apart (an asyncwatchpoint set at
 * the first call sees the second). */
static void watch_page(int n, long gap_ms)
{
	volatile long *page = mmap(TGT_WATCH_PAGE, 4096, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (page != TGT_WATCH_PAGE)
		return;
	gpux_watch(page, n);
	nanosleep(&(struct timespec){ gap_ms / 1000, gap_ms % 1000 * 1000 * 1000 }, NULL);
	gpux_watch(page, n);
	munmap((void *)page, 4096);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "wpcheck"))
		return wpcheck();
	int n = argc > 1 ? atoi(argv[1]) : 5;
	if (argc > 2)
		sleep((unsigned)atoi(argv[2]));
	long s = 0;
	for (int i = 0; i < n; i++)
		s = gpux_tgt_add(s, i + 1);
	for (int i = 0; i < n; i++)
		(void)getppid();
	if (gpux_stack_args(1, 2, 3, 4, 5, 6, 7, 8) != 77)
		return 1;
	/* on the stack: a page the process has touched, which a probe can read */
	char bytes[] = "gpux\tbuf\001\377";
	if (gpux_bytes(bytes, (long)sizeof(bytes) - 1) != 'g' + 10)
		return 1;
	struct gpux_rec tail = { 2, -3, "tail", { 7, -8, 9 }, 200, NULL };
	struct gpux_rec head = { 1, 5, "head", { 10, 20, 30 }, 1, &tail };
	int nums[4] = { 100, -200, 300, 400 };
	if (gpux_walk(&head, nums) != 101)
		return 1;
#ifdef TGT_USDT
	/* arguments of each kind a note gives: registers (int, a negative
	 * int, 64 bits, a string, a negative char, an unsigned short), memory
	 * (a volatile) and a constant */
	char who[] = "probe_tgt";
	for (int i = 0; i < n; i++) {
		volatile long mem = 100 + i;
		signed char neg = (signed char)-i;
		unsigned short us = (unsigned short)(65535 - i);
		DTRACE_PROBE3(gpux_tgt, loop, i, -i - 1, (long)i << 40);
		DTRACE_PROBE3(gpux_tgt, name, who, neg, us);
		DTRACE_PROBE2(gpux_tgt, kinds, mem, 42);
		usdt_guarded(i);
	}
	DTRACE_PROBE(gpux_end, done);
#endif
	if (gpux_stack_top(1) != 11)
		return 1;
	watch_page(n, argc > 4 ? atol(argv[4]) : 0);
	printf("sum %ld\n", s);
	fflush(stdout);
	if (argc > 3)
		sleep((unsigned)atoi(argv[3]));
	return 0;
}
