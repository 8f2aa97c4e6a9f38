/* host_usdt_parse_arg: the argument specs x86-64's sys/sdt.h writes,
 * and the forms gpux refuses rather than misreads. */
#include <stdio.h>
#include <string.h>

#include "host_usdt.h"

static int fails;

static void ok(const char *spec, enum host_usdt_loc loc, unsigned size, int is_signed,
	       unsigned reg, long long val)
{
	struct host_usdt_arg a;
	if (host_usdt_parse_arg(spec, &a) || a.loc != loc || a.size != size ||
	    a.is_signed != (is_signed != 0) || (loc != HOST_USDT_CONST && a.reg != reg) ||
	    a.val != val) {
		fprintf(stderr, "FAIL: %s\n", spec);
		fails++;
	}
}

static void bad(const char *spec)
{
	struct host_usdt_arg a;
	if (host_usdt_parse_arg(spec, &a) == 0) {
		fprintf(stderr, "FAIL: %s accepted\n", spec);
		fails++;
	}
}

int main(void)
{
	ok("-4@%edi", HOST_USDT_REG, 4, 1, 112, 0);
	ok("8@%rax", HOST_USDT_REG, 8, 0, 80, 0);
	ok("-1@%al", HOST_USDT_REG, 1, 1, 80, 0);
	ok("2@%r14w", HOST_USDT_REG, 2, 0, 8, 0);
	ok("1@%sil", HOST_USDT_REG, 1, 0, 104, 0);
	ok("8@-16(%rbp)", HOST_USDT_MEM, 8, 0, 32, -16);
	ok("-8@(%rsp)", HOST_USDT_MEM, 8, 1, 152, 0);
	ok("4@24(%r12)", HOST_USDT_MEM, 4, 0, 24, 24);
	ok("4@$5", HOST_USDT_CONST, 4, 0, 0, 5);
	ok("-4@$-42", HOST_USDT_CONST, 4, 1, 0, -42);
	bad("4@gpux_var(%rip)");   /* a symbol */
	bad("8@8(%rax,%rbx,4)");   /* an index register */
	bad("3@%eax");             /* no such size */
	bad("4@%xmm0");
	bad("%eax");
	bad("4@");
	bad("4@$");
	bad("4@8(%rax");
	bad("-@%eax");
	bad("4@x(%rax)");
	if (!fails)
		printf("ok\n");
	return fails != 0;
}
