// The first unit of a relocatable-device-code link: its kernel calls a
// device function and reads a __device__ variable of the second unit.
extern __device__ float rdc_scale;
__device__ float rdc_twice(float x);

__global__ void rdc_vadd(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = rdc_twice(a[i]) + b[i] * rdc_scale;
}
