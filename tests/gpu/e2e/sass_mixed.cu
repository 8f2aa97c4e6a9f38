// One program, two translation units, two fatbins: ptxPart has PTX (this
// file, built like the other programs), sassPart has sm_90 SASS only
// (sass_part.cu). gpux instruments ptxPart, reports sassPart as not
// instrumentable and runs it untouched. Both 40 blocks x 256, n = 10000.
#include "common.h"

void launch_sass_part(float *x, int n);

__global__ void ptxPart(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * 0.5f;
}

int main()
{
	const int n = 10000;
	static float x[n], want[n];
	for (int i = 0; i < n; i++) {
		x[i] = (float)(i % 77) * 0.25f;
		want[i] = x[i] * 0.5f + 10.0f;
	}
	float *dx = dev_alloc(n);
	to_dev(dx, x, n);
	printf("ptxPart<<<40, 256>>> then sassPart<<<40, 256>>> n=%d\n", n);
	ptxPart<<<40, 256>>>(dx, n);
	CKLAUNCH();
	launch_sass_part(dx, n);
	CK(cudaDeviceSynchronize());
	to_host(x, dx, n);
	summary("x", x, n);
	int bad = check("x", x, want, n);
	CK(cudaFree(dx));
	return finish(bad);
}
