#include "repl.h"
int repl_run(FILE *in, FILE *out, bool use_readline) { (void)in; (void)out; (void)use_readline; return 0; }
