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

from . import _ptxjit
from ._ptxjit import *  # noqa: F401,F403
from ._ptxjit import BoundaryConditions, Buffer, Func, ImageParam, Pipeline, Type  # noqa: F401

for _error in (CompileError, InternalError, RuntimeError, TargetError):  # noqa: F405
    _error.__module__ = "ptxjit"  # tracebacks say ptxjit.CompileError

_KDL_CUDA = 2


def _framework_stream(array):
    """The stream the array's framework orders its work on now, as an integer handle, or None."""
    module = type(array).__module__.split(".")[0]
    if module == "torch":
        import torch

        return torch.cuda.current_stream(array.device).cuda_stream
    if module == "cupy":
        import cupy

        return cupy.cuda.get_current_stream().ptr
    return None


def _stream_handle(stream):
    """A stream given by the caller (torch.cuda.Stream, cupy Stream, or an integer handle)."""
    for attribute in ("cuda_stream", "ptr"):
        if hasattr(stream, attribute):
            return int(getattr(stream, attribute))
    return int(stream)


def _dlpack_stream(handle):
    # DLPack reserves 0 for "no stream given"; the legacy default stream is 1.
    return 1 if handle == 0 else handle


def _as_buffer(array, stream=None, writable=False):
    """Views `array` as a ptxjit.Buffer. `stream` is the handle the pipeline will run on."""
    if isinstance(array, Buffer):
        return array
    if not hasattr(array, "__dlpack__"):
        if writable:
            raise TypeError("an output must be an array or tensor with __dlpack__ (NumPy, PyTorch, CuPy), not a "
                            + type(array).__name__)
        import numpy

        array = numpy.asarray(array)
    if type(array).__module__ == "numpy" and not array.flags.writeable:
        if writable:
            raise ValueError("the output array is read-only")
        array = array.copy()  # DLPack cannot export read-only arrays
    device_type, _ = array.__dlpack_device__()
    if device_type == _KDL_CUDA:
        handle = stream if stream is not None else _framework_stream(array)
        return Buffer(array, stream=None if handle is None else _dlpack_stream(handle))
    return Buffer(array)


def _image_param_set(self, array):
    """Binds an array or tensor (or a ptxjit.Buffer) to this ImageParam, without a copy."""
    self._set_buffer(_as_buffer(array))


ImageParam.set = _image_param_set

_NUMPY_TYPES = {
    ("int", 8): "int8", ("int", 16): "int16", ("int", 32): "int32", ("int", 64): "int64",
    ("uint", 8): "uint8", ("uint", 16): "uint16", ("uint", 32): "uint32", ("uint", 64): "uint64",
    ("float", 32): "float32", ("float", 64): "float64", ("bool", 1): "bool",
}


def _type_key(t):
    kind = "float" if t.is_float() else "bool" if t.is_bool() else "uint" if t.is_uint() else "int"
    return kind, t.bits


def _allocate(types, sizes, device):
    """Arrays for a realize over `sizes` (innermost first), one for each output value."""
    shape = tuple(reversed([int(s) for s in sizes]))
    names = [_NUMPY_TYPES[_type_key(t)] for t in types]
    if device is None or str(device) == "cpu":
        import numpy

        return [numpy.empty(shape, dtype=name) for name in names]
    import torch

    return [torch.empty(shape, dtype=getattr(torch, name), device=device) for name in names]


def _is_sizes(value):
    return isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value)


class Pipeline(_ptxjit.Pipeline):
    __doc__ = _ptxjit.Pipeline.__doc__

    def __init__(self, outputs):
        self._outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        super().__init__(outputs)

    def realize(self, outputs, *, stream=None, device=None):
        """Runs the pipeline.

        ``realize([w, h])`` returns a new array (a list of them for several outputs or Tuple
        values): a NumPy array, or a PyTorch tensor on ``device`` (``"cuda:0"``, a torch.device).
        ``realize(out)`` or ``realize([out0, out1])`` writes into the arrays or tensors given.
        CUDA tensors run on their device and on the framework's current stream; ``stream``
        (torch.cuda.Stream, cupy stream or handle) names another; ``device`` also names the CUDA
        device for host arrays on a CUDA target.
        """
        handle = None if stream is None else _stream_handle(stream)
        made = None
        if _is_sizes(outputs):
            types = [t for f in self._outputs for t in f.types()]
            made = _allocate(types, outputs, device)
            given = made
        else:
            given = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        buffers = [_as_buffer(o, handle, writable=True) for o in given]
        devices = {b.cuda_device for b in buffers if b.cuda_device >= 0}
        if device is not None and str(device) != "cpu":
            devices.add(_device_index(device))
        if len(devices) > 1:
            raise ValueError("the outputs of one realize are on different CUDA devices: %s" % sorted(devices))
        if handle is None and made is None:
            handle = next((_framework_stream(o) for o, b in zip(given, buffers) if b.cuda_device >= 0), None)
        if handle is None and made is not None and device is not None and str(device) != "cpu":
            handle = _framework_stream(made[0])
        self._realize(buffers, devices.pop() if devices else -1, handle)
        if made is None:
            return None
        return made[0] if len(made) == 1 else made


def _device_index(device):
    if isinstance(device, int):
        return device
    index = getattr(device, "index", None)
    if index is not None:
        return index
    text = str(device)
    return int(text.split(":")[1]) if ":" in text else 0


def _func_realize(self, sizes, target=None, *, stream=None, device=None):
    """Compiles a Pipeline of this Func for `target` (default: PTXJIT_TARGET, else the host) and
    realizes it over `sizes` (innermost first); see Pipeline.realize."""
    pipeline = Pipeline(self)
    pipeline.compile_jit(target)
    return pipeline.realize(sizes, stream=stream, device=device)


Func.realize = _func_realize
