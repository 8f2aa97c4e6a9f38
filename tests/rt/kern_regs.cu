// A kernel that keeps many values live: the register cap's test (its
// instrumented PTX must fit the registers its SASS uses).
extern "C" __global__ void heavy(const float *in, float *out, int n)
{
	float v[40];
#pragma unroll
	for (int k = 0; k < 40; k++)
		v[k] = in[threadIdx.x + k * n];
	float s = 0.0f;
#pragma unroll
	for (int r = 1; r < 6; r++)
#pragma unroll
		for (int k = 0; k < 40; k++)
			s = fmaf(v[k], v[(k * r + 7) % 40], s);
	out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
