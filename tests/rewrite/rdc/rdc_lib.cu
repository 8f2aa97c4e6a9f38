// The second unit: what the first uses, and a kernel of its own.
__device__ float rdc_scale = 3.0f;

__device__ float rdc_twice(float x)
{
	return 2.0f * x;
}

__global__ void rdc_fill(float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = rdc_twice(rdc_scale);
}
