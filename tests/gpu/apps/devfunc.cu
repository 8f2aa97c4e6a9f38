// __noinline__ device functions with early returns, called from a kernel
// that returns early: one ld.global in the kernel per i < n, one
// st.global in put() per i < n whose clamped value is not 0.
__device__ __noinline__ float clampf(float x, float lo, float hi)
{
	if (x < lo)
		return lo;
	if (x > hi)
		return hi;
	return x;
}

__device__ __noinline__ void put(float *p, int i, float v)
{
	if (v == 0.0f)
		return;
	p[i] = v;
}

extern "C" __global__ void devfunc(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float v = clampf(in[i], -1.0f, 1.0f);
	put(out, i, v);
}
