/* What the kernel's verifier said of a program it refused, taken from
 * libbpf's log while objects load (kattach_verdict.c). */
#ifndef GPUX_KATTACH_VERDICT_H
#define GPUX_KATTACH_VERDICT_H

#include <stdbool.h>

#include <bpf/libbpf.h>

#define HOST_VERDICT_LOG_MAX (1u << 20) /* of the log kept: its start says most */

struct kattach_verdict {
	char prog[128];    /* the program libbpf could not load */
	char message[256]; /* the verifier's reason */
	char source[160];  /* the statement it was checking, when the log says */
	char where[160];   /* its FILE:LINE */
};

/* From here to kattach_verdict_end, libbpf's warnings are kept, not
 * printed; returns the print function to give back. */
libbpf_print_fn_t kattach_verdict_begin(void);
/* Reads the kept log: false when it holds no refused program's log. */
bool kattach_verdict_read(struct kattach_verdict *v);
/* Restores print; with show, the kept log goes to stderr first. */
void kattach_verdict_end(libbpf_print_fn_t print, bool show);

#endif
