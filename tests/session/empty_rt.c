/* What the session tests preload instead of libgpux-rt.so (GPUX_RT): a
 * library that does nothing, so the fake program plays the runtime. */
int gpux_test_rt_loaded;
