// Several kernels for the fatbin tests: plain, with an early return, with
// a device function kept out of line (a .func in the PTX), extern "C".
__device__ __noinline__ float helper(float x) { return x * 2.0f + 1.0f; }

__global__ void vec_add(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

__global__ void scale(float *a, float s, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	a[i] = helper(a[i]) * s;
}

extern "C" __global__ void plain_c_kernel(int *out)
{
	out[threadIdx.x] = threadIdx.x;
}

int main(void) { return 0; }
