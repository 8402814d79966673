"""ptxjit: a JIT compiler for image and tensor pipelines, for the CPU and CUDA GPUs.

The language is spelled as in Halide's Python bindings::

    import numpy as np, ptxjit as pj
    x, y = pj.Var("x"), pj.Var("y")
    inp = pj.ImageParam(pj.Float(32), 2, "inp")
    blur = pj.Func("blur")
    blur[x, y] = (inp[x - 1, y] + inp[x, y] + inp[x + 1, y]) / 3
    inp.set(np.random.rand(100, 102).astype(np.float32))  # array[y, x] is inp[x, y]
    out = pj.Pipeline(blur).realize([100, 100])           # a (100, 100) NumPy array

Arrays map with their axes reversed: dimension 0 of a buffer is the array's last axis. Anything
with ``__dlpack__`` is accepted without a copy (NumPy, PyTorch, CuPy); a CUDA tensor's kernels
run on its device's primary context and on the framework's current stream, unless the call names
another with ``stream=``.
"""

import sys

from . import _ptxjit
from ._ptxjit import *  # noqa: F401,F403
from ._ptxjit import BoundaryConditions, Buffer, Func, Handlers, ImageParam, Pipeline, Type  # noqa: F401

for _error in (CompileError, InternalError, RuntimeError, TargetError):  # noqa: F405
    _error.__module__ = "ptxjit"  # tracebacks say ptxjit.CompileError

_NUMPY_TYPES = {
    ("int", 8): "int8", ("int", 16): "int16", ("int", 32): "int32", ("int", 64): "int64",
    ("uint", 8): "uint8", ("uint", 16): "uint16", ("uint", 32): "uint32", ("uint", 64): "uint64",
    ("float", 16): "float16", ("float", 32): "float32", ("float", 64): "float64", ("bool", 1): "bool",
    ("bfloat", 16): "bfloat16",  # PyTorch's; NumPy has none
}


def _type_key(t):
    kind = ("bfloat" if t.is_bfloat() else "float" if t.is_float() else "bool" if t.is_bool()
            else "uint" if t.is_uint() else "int")
    return kind, t.bits


def _allocate(types, sizes, device):
    """Arrays for a realize over `sizes` (innermost first), one for each output value."""
    shape = tuple(reversed([int(s) for s in sizes]))
    names = [_NUMPY_TYPES[_type_key(t)] for t in types]
    if "bfloat16" in names and device is None:
        raise ValueError("NumPy has no bfloat16: pass device= (PyTorch's) or arrays to realize into")
    if (device is None or str(device) == "cpu") and "bfloat16" not in names:
        import numpy

        return [numpy.empty(shape, dtype=name) for name in names]
    import torch

    return [torch.empty(shape, dtype=getattr(torch, name), device=device) for name in names]


class Pipeline(_ptxjit.Pipeline):
    __doc__ = _ptxjit.Pipeline.__doc__
    _handlers = None  # set_handlers'; a class attribute, so that realize's lookup never fails

    def __init__(self, outputs):
        # The output Funcs, for the types of the arrays realize([sizes]) makes.
        self._outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        super().__init__(outputs)


    def set_handlers(self, handlers):
        """Handlers (print, error, acquire_context, release_context, get_stream) for every realize of
        this pipeline; a realize's own handlers= win over them. None removes them."""
        self._handlers = handlers


def _inputs_cuda_device(pipeline):
    """The CUDA device of the pipeline's bound inputs in device memory (PyTorch tensors), or None
    where there are none or PyTorch is not in use."""
    addresses = [a.device_address for a in pipeline.infer_arguments() if a.is_buffer and a.device_address]
    if not addresses or "torch" not in sys.modules:
        return None
    import ctypes

    cuda = ctypes.CDLL("libcuda.so.1")
    ordinal = ctypes.c_int(-1)
    # CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
    if cuda.cuPointerGetAttribute(ctypes.byref(ordinal), 9, ctypes.c_uint64(addresses[0])) != 0:
        return None
    return f"cuda:{ordinal.value}"


def _realize_sizes(pipeline, sizes, stream, device, handlers):
    """Pipeline.realize([w, h, ...]): new arrays, one for each output value, on the device of the
    inputs in device memory unless `device` names one."""
    if device is None:
        device = _inputs_cuda_device(pipeline)
    made = _allocate([t for f in pipeline._outputs for t in f.types()], sizes, device)
    pipeline.realize(made, stream=stream, device=device, handlers=handlers)
    return made[0] if len(made) == 1 else made


def torch_allocator():
    """Handlers whose device_malloc and device_free take device memory from PyTorch's caching
    allocator, on the stream of the call, so that a pipeline's intermediates share PyTorch's
    memory: ``ptxjit.set_default_handlers(ptxjit.torch_allocator())``."""
    import torch

    def device_malloc(context, stream, nbytes):
        # The acquired context is current: PyTorch's current device is its device.
        return torch.cuda.caching_allocator_alloc(nbytes, stream=stream)

    def device_free(context, stream, pointer):
        torch.cuda.caching_allocator_delete(pointer)

    return Handlers(device_malloc=device_malloc, device_free=device_free)  # noqa: F405


def _func_realize(self, sizes, target=None, *, stream=None, device=None, handlers=None):
    """Compiles a Pipeline of this Func for `target` (default: PTXJIT_TARGET, else the host) and
    realizes it over `sizes` (innermost first); see Pipeline.realize."""
    pipeline = Pipeline(self)
    pipeline.compile_jit(target)
    return pipeline.realize(sizes, stream=stream, device=device, handlers=handlers)


Func.realize = _func_realize
