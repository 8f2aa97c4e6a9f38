// __constant__ coefficients (ld.const: not global sites), float4 loads.
__constant__ float coef[4];

extern "C" __global__ void poly(const float4 *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float4 v = in[i];
		out[i] = coef[0] * v.x + coef[1] * v.y + coef[2] * v.z + coef[3] * v.w;
	}
}
