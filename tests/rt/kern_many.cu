// Five small kernels, built as a SASS-only fatbin for the runtime
// tests: more than the runtime names in a module's one line.
extern "C" __global__ void k1(float *x) { x[threadIdx.x] += 1.0f; }
extern "C" __global__ void k2(float *x) { x[threadIdx.x] += 2.0f; }
extern "C" __global__ void k3(float *x) { x[threadIdx.x] += 3.0f; }
extern "C" __global__ void k4(float *x) { x[threadIdx.x] += 4.0f; }
extern "C" __global__ void k5(float *x) { x[threadIdx.x] += 5.0f; }
