// The driver-API program's kernel, compiled to PTX text (nvcc -ptx
// -arch=compute_80) and embedded in drvapi as a string. Per i < n:
// 2 global loads (x[i], y[i]) and 1 global store (y[i]).
extern "C" __global__ void drvScale(const float *x, float *y, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}
