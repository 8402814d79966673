"""PyTorch CUDA tensors in and out, on PyTorch's streams and contexts (the GPU machine)."""

import ctypes
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ptxjit as pj

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="PyTorch sees no CUDA device")]

HERE = os.path.dirname(os.path.abspath(__file__))


def primary_context_active(ordinal):
    """Whether the primary context of device `ordinal` exists, asked of the driver directly."""
    cuda = ctypes.CDLL("libcuda.so.1")
    assert cuda.cuInit(0) == 0
    device, flags, active = ctypes.c_int(), ctypes.c_uint(), ctypes.c_int()
    assert cuda.cuDeviceGet(ctypes.byref(device), ordinal) == 0
    assert cuda.cuDevicePrimaryCtxGetState(device, ctypes.byref(flags), ctypes.byref(active)) == 0
    return active.value != 0


class _NvmlProcessInfo(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong), ("gpuInstanceId", ctypes.c_uint),
                ("computeInstanceId", ctypes.c_uint)]


def devices_with_contexts_by_nvml(pid):
    """The devices on which NVML lists a compute context of process `pid` (what uses device memory
    there); None where NVML is missing or lists none of this process's (a container's PID
    namespace hides them)."""
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return None
    if nvml.nvmlInit_v2() != 0:
        return None
    try:
        count = ctypes.c_uint()
        assert nvml.nvmlDeviceGetCount_v2(ctypes.byref(count)) == 0
        found = []
        for d in range(count.value):
            device = ctypes.c_void_p()
            assert nvml.nvmlDeviceGetHandleByIndex_v2(d, ctypes.byref(device)) == 0
            n = ctypes.c_uint(64)
            infos = (_NvmlProcessInfo * 64)()
            if nvml.nvmlDeviceGetComputeRunningProcesses_v3(device, ctypes.byref(n), infos) != 0:
                return None
            if any(infos[i].pid == pid for i in range(n.value)):
                found.append(d)
        return found or None
    finally:
        nvml.nvmlShutdown()


def gpu_blur(root_producer=False):
    """A 3x3 blur on the GPU; with `root_producer`, its first pass is an intermediate of its own
    (device memory from device_malloc)."""
    x, y, xi, yi = pj.Var("x"), pj.Var("y"), pj.Var("xi"), pj.Var("yi")
    inp = pj.ImageParam(pj.Float(32), 2, "inp")
    bx, by = pj.Func("blur_x"), pj.Func("blur_y")
    bx[x, y] = inp[x, y] + inp[x + 1, y] + inp[x + 2, y]
    by[x, y] = (bx[x, y] + bx[x, y + 1] + bx[x, y + 2]) / 9
    by.gpu_tile(x, y, xi, yi, 32, 8)
    if root_producer:
        bx.compute_root().gpu_tile(x, y, xi, yi, 32, 8)
    p = pj.Pipeline(by)
    p.compile_jit(pj.Target("host-cuda"))
    return inp, p


def blur_reference(a):
    return torch.nn.functional.avg_pool2d(a[None, None], 3, stride=1)[0, 0]


def test_tensors_in_and_out(rng):
    inp, p = gpu_blur()
    a = torch.rand((131, 259), device="cuda")  # a[y, x]
    inp.set(a)
    out = p.realize([257, 129], device=a.device)
    assert isinstance(out, torch.Tensor) and out.device == a.device and out.shape == (129, 257)
    torch.testing.assert_close(out, blur_reference(a), rtol=1e-5, atol=1e-6)
    given = torch.full((129, 257), float("nan"), device="cuda")
    assert p.realize(given) is None
    torch.testing.assert_close(given, blur_reference(a), rtol=1e-5, atol=1e-6)


def test_non_contiguous_tensors_work_by_strides():
    inp, p = gpu_blur()
    big = torch.rand((300, 300), device="cuda")
    a = big[10:141:2, 7:130]  # strided rows
    inp.set(a)
    out = torch.empty((200, 121), device="cuda")[::3][: a.shape[0] - 2]  # strided output rows
    p.realize(out)
    torch.testing.assert_close(out, blur_reference(a), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="innermost"):
        inp.set(big[:, ::2])


def test_work_is_ordered_on_the_current_stream():
    inp, p = gpu_blur()
    source = torch.rand((1026, 2050), device="cuda")
    stream = torch.cuda.Stream()  # PyTorch's streams do not wait for the legacy default stream
    torch.cuda.synchronize()
    with torch.cuda.stream(stream):
        a = torch.zeros_like(source)
        torch.cuda._sleep(20_000_000)  # the input is written late on this stream
        a.copy_(source)
        inp.set(a)
        out = torch.empty((1024, 2048), device="cuda")
        p.realize(out)
        doubled = out * 2  # PyTorch reads the output on the same stream
    stream.synchronize()
    torch.testing.assert_close(doubled, 2 * blur_reference(source), rtol=1e-5, atol=1e-6)


def test_an_explicit_stream_argument():
    inp, p = gpu_blur()
    source = torch.rand((66, 130), device="cuda")
    stream = torch.cuda.Stream()
    torch.cuda.synchronize()
    inp.set(source)
    out = torch.empty((64, 128), device="cuda")
    with torch.cuda.stream(stream):
        torch.cuda._sleep(10_000_000)
        out.fill_(0)
    p.realize(out, stream=stream)  # after the fill, on `stream`
    stream.synchronize()
    torch.testing.assert_close(out, blur_reference(source), rtol=1e-5, atol=1e-6)


def test_host_arrays_on_a_cuda_target(rng):
    inp, p = gpu_blur()
    a = rng.random((40, 70), dtype=np.float32)
    inp.set(a)
    out = p.realize([68, 38])
    assert isinstance(out, np.ndarray)
    np.testing.assert_allclose(out, blur_reference(torch.from_numpy(a)).numpy(), rtol=1e-5, atol=1e-6)


def test_types_must_match():
    inp, p = gpu_blur()
    inp.set(torch.rand((10, 10), device="cuda"))
    with pytest.raises(pj.RuntimeError, match="type"):
        p.realize(torch.empty((8, 8), device="cuda", dtype=torch.float64))
    with pytest.raises(ValueError, match="complex64"):
        inp.set(torch.rand((10, 10), device="cuda").to(torch.complex64))
    with pytest.raises(pj.CompileError, match="type float32 but the buffer given has type float16"):
        inp.set(torch.rand((10, 10), device="cuda").half())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16_bit_float_tensors(dtype):
    # With strict_float each operation rounds to the tensor's type, as PyTorch's elementwise
    # kernels do for one operation.
    t = getattr(torch, dtype)
    ty = pj.Float(16) if dtype == "float16" else pj.BFloat(16)
    x, xi = pj.Var("x"), pj.Var("xi")
    a, b = pj.ImageParam(ty, 1, "a"), pj.ImageParam(ty, 1, "b")
    f = pj.Func("f")
    f[x] = (a[x] * b[x], a[x] + b[x], pj.cast(pj.Float(32), a[x]))
    f.gpu_tile(x, xi, 128)
    p = pj.Pipeline(f)
    p.compile_jit(pj.Target("host-cuda-strict_float"))
    av = torch.randn(100000, device="cuda").to(t) * 50
    bv = torch.randn(100000, device="cuda").to(t) * 50
    a.set(av)
    b.set(bv)
    prod, total, wide = p.realize([100000], device=av.device)
    assert prod.dtype == t and wide.dtype == torch.float32
    assert torch.equal(prod, av * bv) and torch.equal(total, av + bv)
    assert torch.equal(wide, av.float())
    narrow = pj.Func("narrow")
    c = pj.ImageParam(pj.Float(32), 1, "c")
    narrow[x] = pj.cast(ty, c[x])
    narrow.gpu_tile(x, xi, 128)
    cv = torch.randn(100000, device="cuda") * 1000
    c.set(cv)
    narrowing = pj.Pipeline(narrow)
    narrowing.compile_jit(pj.Target("host-cuda"))
    assert torch.equal(narrowing.realize([100000], device=cv.device), cv.to(t))


def run_python(script, env=None):
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                            env={**os.environ, **(env or {})}, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_no_context_beyond_pytorchs():
    # A fresh process: the realize runs on PyTorch's (primary) context of the tensor's device, and
    # no other device gets one.
    out = run_python(f"""
        import sys; sys.path.insert(0, {HERE!r})
        import torch, ptxjit as pj
        from test_torch import gpu_blur, blur_reference, primary_context_active
        last = torch.cuda.device_count() - 1
        a = torch.rand((50, 60), device=f"cuda:{{last}}")
        before = [primary_context_active(d) for d in range(torch.cuda.device_count())]
        inp, p = gpu_blur()
        inp.set(a)
        out = p.realize([58, 48], device=a.device)
        torch.testing.assert_close(out, blur_reference(a), rtol=1e-5, atol=1e-6)
        after = [primary_context_active(d) for d in range(torch.cuda.device_count())]
        assert after == before, (before, after)
        # What holds device memory, as NVML sees it: this process on PyTorch's device only.
        from test_torch import devices_with_contexts_by_nvml
        import os
        seen = devices_with_contexts_by_nvml(os.getpid())
        assert seen is None or seen == [last], seen
        print("ok", last, after, "nvml", seen)
    """)
    assert out.startswith("ok")
    print(out)  # whether NVML could see the process (pytest -s)


@pytest.mark.skipif(torch.cuda.device_count() < 2 or shutil.which("torchrun") is None,
                    reason="needs two GPUs and torchrun")
def test_one_process_per_gpu_under_torchrun():
    result = subprocess.run(["torchrun", "--standalone", "--nproc_per_node=2", os.path.join(HERE, "torchrun_worker.py")],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("rank ok") == 2, result.stdout


def test_torch_allocator_and_handlers_from_python():
    inp, p = gpu_blur(root_producer=True)
    a = torch.rand((300, 200), device="cuda")
    inp.set(a)

    torch_memory = pj.torch_allocator()
    calls = {"malloc": 0, "free": 0}

    def device_malloc(context, stream, nbytes):
        calls["malloc"] += 1
        assert stream == torch.cuda.current_stream().cuda_stream
        return torch_memory.device_malloc(context, stream, nbytes)

    def device_free(context, stream, pointer):
        calls["free"] += 1
        torch_memory.device_free(context, stream, pointer)

    out = torch.empty((298, 198), device="cuda")
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    previous = pj.set_default_handlers(pj.Handlers(device_malloc=device_malloc, device_free=device_free))
    try:
        p.realize(out)
        torch.testing.assert_close(out, blur_reference(a), rtol=1e-5, atol=1e-6)
        assert calls["malloc"] >= 1 and calls["free"] == calls["malloc"]
        torch.cuda.synchronize()
        # The intermediate (198 x 300 floats) came from PyTorch's memory and went back to it.
        assert torch.cuda.max_memory_allocated() >= before + 198 * 300 * 4
        assert torch.cuda.memory_allocated() == before
    finally:
        pj.set_default_handlers(previous)

    # acquire_context, release_context and get_stream from Python, for one call.
    cuda = ctypes.CDLL("libcuda.so.1")
    device, context = ctypes.c_int(), ctypes.c_void_p()
    assert cuda.cuDeviceGet(ctypes.byref(device), 0) == 0
    assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device) == 0
    stream = torch.cuda.Stream()
    seen = []

    def acquire(create):
        seen.append("acquire")
        return context.value

    def get_stream(cuda_context):
        seen.append(cuda_context)
        return stream.cuda_stream

    given = torch.empty((298, 198), device="cuda")
    p.realize(given, handlers=pj.Handlers(acquire_context=acquire, release_context=lambda: seen.append("release"),
                                          get_stream=get_stream))
    stream.synchronize()
    torch.testing.assert_close(given, blur_reference(a), rtol=1e-5, atol=1e-6)
    assert seen == ["acquire", context.value, "release"]
    with pytest.raises(pj.RuntimeError, match="acquire_context") as refused:
        p.realize(given, handlers=pj.Handlers(acquire_context=lambda create: None))
    assert isinstance(refused.value.__cause__, TypeError)
    assert cuda.cuDevicePrimaryCtxRelease(device) == 0


def test_new_outputs_go_to_the_inputs_device():
    inp, p = gpu_blur()
    a = torch.rand((40, 50), device="cuda")
    inp.set(a)
    assert p.infer_arguments()[0].device_address == a.data_ptr()
    out = p.realize([48, 38])  # no device named: the input's
    assert isinstance(out, torch.Tensor) and out.device == a.device
    torch.testing.assert_close(out, blur_reference(a), rtol=1e-5, atol=1e-6)
