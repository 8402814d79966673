"""Host time per call of a one-kernel elementwise pipeline on PyTorch CUDA tensors, against the
same work through torch.add, a Triton kernel and a CuPy ElementwiseKernel, in one process.

Usage: PYTHONPATH=<build>/python python3 apps/bench/python_call_overhead.py > overhead.json
Each figure is the median over rounds of (wall time of `calls` back-to-back launches) / calls,
measured after warm-up; the GPU work is tiny (4096 floats), so the host path is what is timed.
The results are checked against torch.add before timing.
"""

import json
import statistics
import time

import torch

import ptxjit as pj

N = 4096
CALLS = 2000
ROUNDS = 15


def per_call_us(launch):
    for _ in range(200):
        launch()
    torch.cuda.synchronize()
    rounds = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(CALLS):
            launch()
        rounds.append((time.perf_counter() - start) / CALLS * 1e6)
        torch.cuda.synchronize()
    return statistics.median(rounds)


def ptxjit_add():
    x, xo, xi = pj.Var("x"), pj.Var("xo"), pj.Var("xi")
    a = pj.ImageParam(pj.Float(32), 1, "a")
    b = pj.ImageParam(pj.Float(32), 1, "b")
    f = pj.Func("add")
    f[x] = a[x] + b[x]
    f.gpu_tile(x, xo, xi, 256)
    p = pj.Pipeline(f)
    p.compile_jit(pj.Target("host-cuda"))
    return a, b, p


def main():
    a_t = torch.rand(N, device="cuda")
    b_t = torch.rand(N, device="cuda")
    out = torch.empty(N, device="cuda")
    expected = a_t + b_t
    results = {"elements": N, "calls_per_round": CALLS, "rounds": ROUNDS, "unit": "us per call (host)"}

    a, b, p = ptxjit_add()
    a.set(a_t)
    b.set(b_t)
    p.realize(out)
    torch.testing.assert_close(out, expected)
    results["ptxjit_realize_bound_inputs"] = per_call_us(lambda: p.realize(out))

    def with_inputs():
        a.set(a_t)
        b.set(b_t)
        p.realize(out)

    results["ptxjit_set_and_realize"] = per_call_us(with_inputs)
    results["torch_add_out"] = per_call_us(lambda: torch.add(a_t, b_t, out=out))

    try:
        import triton
        import triton.language as tl

        @triton.jit
        def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offsets < n
            tl.store(out_ptr + offsets, tl.load(a_ptr + offsets, mask=mask) + tl.load(b_ptr + offsets, mask=mask),
                     mask=mask)

        grid = (triton.cdiv(N, 256),)
        out.zero_()
        add_kernel[grid](a_t, b_t, out, N, BLOCK=256)
        torch.testing.assert_close(out, expected)
        results["triton"] = per_call_us(lambda: add_kernel[grid](a_t, b_t, out, N, BLOCK=256))
    except Exception as e:  # a peer that cannot run is reported, not fatal
        results["triton"] = "skipped: %s" % e

    try:
        import cupy

        kernel = cupy.ElementwiseKernel("float32 a, float32 b", "float32 c", "c = a + b", "ptxjit_bench_add")
        a_c, b_c, out_c = (cupy.from_dlpack(t) for t in (a_t, b_t, out))
        stream = cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
        with stream:
            out.zero_()
            kernel(a_c, b_c, out_c)
            torch.testing.assert_close(out, expected)
            results["cupy_elementwise"] = per_call_us(lambda: kernel(a_c, b_c, out_c))
    except Exception as e:
        results["cupy_elementwise"] = "skipped: %s" % e

    peers = [v for k, v in results.items() if k in ("torch_add_out", "triton", "cupy_elementwise") and
             isinstance(v, float)]
    if peers:
        results["ptxjit_over_fastest_peer"] = results["ptxjit_realize_bound_inputs"] / min(peers)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
