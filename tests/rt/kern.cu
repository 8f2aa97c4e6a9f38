// The kernels of the runtime tests: one extern "C", one C++ (mangled
// name, demangled in gpux's output).
extern "C" __global__ void add_one(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += 1.0f;
}

__global__ void scale(float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	x[i] *= a;
}
