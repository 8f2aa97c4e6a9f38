// Kernels for sass_floor: shaped like PyTorch's elementwise kernels
// (128 threads a block, a float4 per thread, or WORK float4s per thread).
extern "C" __global__ void add1(const float4 *x, float4 *y, unsigned n)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float4 v = x[i];
		y[i] = make_float4(v.x + 1.f, v.y + 1.f, v.z + 1.f, v.w + 1.f);
	}
}

extern "C" __global__ void add16(const float4 *x, float4 *y, unsigned n)
{
	unsigned base = blockIdx.x * blockDim.x * 16 + threadIdx.x;
#pragma unroll
	for (unsigned k = 0; k < 16; k++) {
		unsigned i = base + k * blockDim.x;
		if (i < n) {
			float4 v = x[i];
			y[i] = make_float4(v.x + 1.f, v.y + 1.f, v.z + 1.f, v.w + 1.f);
		}
	}
}
