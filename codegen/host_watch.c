/* watchpoint: and asyncwatchpoint: probes. The probe's body is a
 * perf_event program run on a hardware breakpoint. At an ADDRESS the
 * breakpoint is set when attaching: in the -p/-c process, else on every
 * CPU for a kernel address. At FUNC+argN a setup uprobe on FUNC of the
 * traced program hands argument N over (HOST_REC_WATCH) and the
 * controller sets the breakpoint there; for watchpoint: the setup probe
 * stops the process (SIGSTOP) so that no access is missed until the
 * controller has set it and lets it go on (SIGCONT). */
#include <linux/hw_breakpoint.h>
#include <signal.h>
#include <string.h>

#include "host_priv.h"

/* The process watched: the command's, else -p's; 0 for none. */
static int watched_pid(const struct hctx *h)
{
	return h->opts->cpid > 0 ? (int)h->opts->cpid : h->opts->lib_pid > 0 ? h->opts->lib_pid : 0;
}

/* Whether the command or a process is given (compiling only, a command
 * reads as pid 0). */
static bool have_process(const struct hctx *h)
{
	return h->opts->cpid >= 0 || h->opts->lib_pid > 0;
}

const char *hl_watch_target(struct hctx *h)
{
	if (h->opts->cmd)
		return h->opts->cmd;
	if (h->opts->lib_pid > 0)
		return arena_printf(&h->obj->arena, "/proc/%d/exe", h->opts->lib_pid);
	return NULL;
}

const char *hl_watch_name(struct hctx *h, const struct attach *at)
{
	const char *target = at->wp_func ? hl_watch_target(h) : NULL;
	if (target)
		return arena_printf(&h->obj->arena, "%s:%s:%s:%u:%s", at->prov->name, target,
				    at->wp_func, at->wp_len, at->wp_mode);
	return arena_printf(&h->obj->arena, "%s:%llu:%u:%s", at->prov->name,
			    (unsigned long long)at->wp_addr, at->wp_len, at->wp_mode);
}

static unsigned bp_type(const char *mode)
{
	unsigned t = 0;
	for (const char *m = mode; *m; m++)
		t |= *m == 'r' ? HW_BREAKPOINT_R : *m == 'w' ? HW_BREAKPOINT_W : HW_BREAKPOINT_X;
	return t;
}

/* The setup uprobe: in the watched process only, a ring buffer record
 * reserved first (no record, no stop: a stopped process nobody would
 * resume), then SIGSTOP, then the argument handed over. */
static void setup_body(struct hctx *h, const struct attach *at, int body)
{
	LLVMValueRef tgid = LLVMBuildLShr(
		h->b, host_helper(h, BPF_H_GET_CURRENT_PID_TGID, h->i64, NULL, 0),
		host_const(h, 32), "");
	LLVMBasicBlockRef ours = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "ours");
	LLVMBasicBlockRef got = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "reserved");
	LLVMBasicBlockRef out = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "out");
	LLVMBuildCondBr(h->b,
			LLVMBuildICmp(h->b, LLVMIntEQ, tgid,
				      host_const(h, (uint64_t)watched_pid(h)), ""),
			ours, out);
	LLVMPositionBuilderAtEnd(h->b, ours);
	LLVMValueRef rargs[] = { h->events, host_const(h, 16), host_const(h, 0) };
	LLVMValueRef rec = host_helper(h, BPF_H_RINGBUF_RESERVE, h->ptr, rargs, 3);
	LLVMBuildCondBr(h->b, LLVMBuildIsNotNull(h->b, rec, ""), got, out);
	LLVMPositionBuilderAtEnd(h->b, got);
	if (!at->wp_async) {
		LLVMValueRef sig = host_const(h, SIGSTOP);
		host_helper(h, BPF_H_SEND_SIGNAL, h->i64, &sig, 1);
	}
	uint64_t hdr = (uint64_t)HOST_REC_WATCH | (uint64_t)body << 32; /* little endian */
	LLVMBuildStore(h->b, host_const(h, hdr), rec);
	LLVMBuildStore(h->b, hl_reg(h, hl_pt_regs_arg[at->wp_arg]), host_gep(h, rec, 8));
	LLVMValueRef sargs[] = { rec, host_const(h, 0) };
	host_helper(h, BPF_H_RINGBUF_SUBMIT, h->i64, sargs, 2); /* void */
	LLVMBuildBr(h->b, out);
	LLVMPositionBuilderAtEnd(h->b, out);
	LLVMBuildRet(h->b, host_const(h, 0));
}

void hl_lower_watchpoint(struct hctx *h, struct node *p, const struct node *an,
			 const char *name)
{
	const struct attach *at = &an->u.attach;
	const char *target = at->wp_func ? hl_watch_target(h) : NULL;
	if (at->wp_func && (!have_process(h) || !target)) {
		struct diag *dg = host_err(h, an, "-p PID or -c CMD required for %s",
					   at->prov->name);
		diag_hint(dg, "FUNC+argN names a function of the traced program");
		return;
	}
	int body = h->obj->nprogs;
	LLVMValueRef fn;
	if (hl_add_prog(h, p, an, name, "perf_event", &fn))
		return;
	struct host_prog *hp = &h->obj->progs[body];
	hp->at.watch.deferred = at->wp_func != NULL;
	hp->at.watch.async = at->wp_async;
	hp->at.watch.addr = at->wp_addr;
	hp->at.watch.len = at->wp_len;
	hp->at.watch.type = bp_type(at->wp_mode);
	hp->at.watch.pid = have_process(h) ? watched_pid(h) : -1;
	if (!at->wp_func)
		return;
	const char *sname = arena_printf(&h->obj->arena, "%s_setup", name);
	const char *sec = arena_printf(&h->obj->arena, "uprobe/%s:%s", target, at->wp_func);
	hl_prog_append(h, &(struct host_prog){ .func = sname, .section = sec,
					       .probe = at->text, .attach = ATTACH_UPROBE,
					       .run = HOST_RUN_KERNEL,
					       .span = an->span });
	hl_begin_fn(h, (unsigned)p->span.first_line, sname, sec);
	setup_body(h, at, body);
}
