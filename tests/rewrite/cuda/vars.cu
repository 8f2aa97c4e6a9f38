// Module variables of every kind nvcc makes, for a live session's copy
// (rewrite_ptx -V): __device__ scalars, arrays and structs, a pointer
// initialised with another's address, __constant__ tables read directly
// and through a register, __managed__ memory, a static variable passed
// to a device function, and printf's format string.
#include <cstdio>

struct pair { int a; float b[4]; };
__device__ int counter;
__device__ float arr[256];
__constant__ float table[64];
__constant__ int steps[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
__device__ pair pv;
__device__ int target;
__device__ int *ptr = &target;
__managed__ int managed_total;
static __device__ int hidden;

__device__ __noinline__ void bump(int *p) { atomicAdd(p, 1); }

__global__ void vars(float *out, int n, int sel)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	atomicAdd(&counter, 1);
	arr[i % 256] += table[i % 64] + table[3] + steps[sel & 7];
	pv.b[i & 3] = pv.a;
	*ptr += 1;
	bump(&hidden);
	atomicAdd(&managed_total, 1);
	const float *tp = table;
	out[i] = tp[sel & 63];
	if (i == 0)
		printf("counter %d\n", counter);
}
