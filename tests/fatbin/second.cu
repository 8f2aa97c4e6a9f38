// A second translation unit: linked programs hold one fatbin per TU.
__global__ void second_kernel(int *p) { p[threadIdx.x] += 1; }
