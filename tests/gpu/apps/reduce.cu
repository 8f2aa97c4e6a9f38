// Block sum in shared memory with __syncthreads: one ld.global per i < n,
// one st.global per block (thread 0). Per-block results, not atomicAdd,
// so the output is deterministic and comparable bit for bit.
extern "C" __global__ void reduceBlocks(const float *in, float *out, int n)
{
	__shared__ float s[256];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	s[threadIdx.x] = i < n ? in[i] : 0.0f;
	__syncthreads();
	for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
		if (threadIdx.x < stride)
			s[threadIdx.x] += s[threadIdx.x + stride];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		out[blockIdx.x] = s[0];
}
