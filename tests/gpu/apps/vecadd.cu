// Vector add with a bounds check (bpftime's "medium" preset: 10000
// elements on 40 x 256 threads): 2 ld.global + 1 st.global per i < n.
extern "C" __global__ void vecAdd(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}
