"""A JAX program: a jitted elementwise function (an XLA fusion compiled
in-process and loaded as a cubin without PTX) and a matmul (cuBLASLt, or
a Triton/XLA GEMM fusion), run a few times. gpux probes their kernels
through SASS patching; every thread launched exits once. XLA's command
buffers (CUDA graphs) are turned off by the test so that each kernel is
a launch cuda:launch sees. Deterministic output."""
import jax
import jax.numpy as jnp


@jax.jit
def step(x, w):
    y = jnp.tanh(x * 0.5 + 1.0)
    return (y @ w).sum(axis=1)


x = jnp.arange(512 * 256, dtype=jnp.float32).reshape(512, 256) / 1e5
w = jnp.ones((256, 128), dtype=jnp.float32) / 256.0
for _ in range(3):
    out = step(x, w).block_until_ready()
print(f"jax {jax.__version__} backend {jax.default_backend()} out[0] {float(out[0]):.6f} "
      f"out[-1] {float(out[-1]):.6f}")
