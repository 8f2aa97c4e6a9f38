/* abi/gpux_dev.h compiled by nvcc: gpux_key_hash on the host side of a
 * CUDA program and in a kernel gives the known values. Built whenever
 * nvcc is found (so the header must compile as CUDA C); without a GPU
 * the device half is skipped (exit 77). */
#include <cstdio>

#include <cuda_runtime.h>

#include "gpux_dev.h"
#include "key_hash_cases.h"

__global__ void hash_all(const struct key_hash_case *cases, unsigned n, uint64_t *out)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = gpux_key_hash(cases[i].key, cases[i].words);
}

int main()
{
	const unsigned n = KEY_HASH_NCASES;
	int failed = 0;
	for (unsigned i = 0; i < n; i++)
		if (gpux_key_hash(key_hash_cases[i].key, key_hash_cases[i].words) !=
		    key_hash_cases[i].hash) {
			std::printf("FAIL: host, case %u\n", i);
			failed++;
		}
	int devices = 0;
	if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
		std::printf("host side: %s; no GPU, device side skipped\n", failed ? "FAILED" : "ok");
		return failed ? 1 : 77;
	}
	struct key_hash_case *d_cases;
	uint64_t *d_out, out[KEY_HASH_NCASES];
	if (cudaMalloc(&d_cases, sizeof(key_hash_cases)) != cudaSuccess ||
	    cudaMalloc(&d_out, sizeof(out)) != cudaSuccess ||
	    cudaMemcpy(d_cases, key_hash_cases, sizeof(key_hash_cases),
		       cudaMemcpyHostToDevice) != cudaSuccess) {
		std::printf("FAIL: CUDA setup\n");
		return 1;
	}
	hash_all<<<1, 32>>>(d_cases, n, d_out);
	if (cudaMemcpy(out, d_out, sizeof(out), cudaMemcpyDeviceToHost) != cudaSuccess) {
		std::printf("FAIL: the kernel: %s\n", cudaGetErrorString(cudaGetLastError()));
		return 1;
	}
	for (unsigned i = 0; i < n; i++)
		if (out[i] != key_hash_cases[i].hash) {
			std::printf("FAIL: device, case %u: 0x%016llx\n", i, (unsigned long long)out[i]);
			failed++;
		}
	std::printf("%u cases, host and device: %s\n", n, failed ? "FAILED" : "ok");
	return failed != 0;
}
