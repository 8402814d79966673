#ifndef PTXJIT_PYTHON_BINDINGS_H
#define PTXJIT_PYTHON_BINDINGS_H

// The pieces of the extension module, one a file, and the conversions they share. Only ptxjit's
// public headers are used: the module is a user of the library like any other.

#include "ptxjit.h"

#include <nanobind/nanobind.h>

#include <memory>
#include <optional>
#include <vector>

namespace ptxjit::python {

namespace nb = nanobind;

/// A scalar Param of a type chosen at run time (C++'s Param<T> fixes it at compile time).
struct ScalarParam {
  std::shared_ptr<ParameterContents> contents;
  Type type;
};

/// An array's memory viewed without a copy, and the CUDA device it is on (-1: host memory).
struct ImportedBuffer {
  RawBuffer buffer;
  int cuda_device = -1;
  bool torch = false; ///< a PyTorch tensor's: its work is ordered on PyTorch's streams
};

/// Python callables standing in for JITHandlers' functions (None: not overridden). Handles
/// (contexts, streams, device pointers) are ints.
struct PythonHandlers {
  nb::object print, error, acquire_context, release_context, get_stream, device_malloc, device_free;
};

/// One realize called from Python: the device of its tensors, the stream the caller's framework
/// orders its work on (PyTorch's current stream) when there is one, and the Python handlers of
/// the call and the pipeline.
struct PythonCall : JITUserContext {
  CUstream stream = nullptr;
  PythonHandlers python;
  /// The first exception a handler of this call raised: realize raises from it.
  nb::object raised;
};

/// Whether Python can be called from here: initialized and not finalizing (buffers and handlers
/// may be reached from static destructors at exit, after Python's own).
bool python_usable();

/// Points the call's handlers at `call.python`'s callables, where they are set.
void install_python_handlers(PythonCall &call);

/// Views `array`: a ptxjit.Buffer, a PyTorch tensor (read directly), an unused DLPack capsule,
/// or anything with __dlpack__; with `writable` false also what numpy.asarray takes (copied), and
/// a read-only NumPy array (copied: DLPack cannot export one). `stream` is the CUDA stream the
/// work will run on, given to __dlpack__ so that the producer orders its own work before it
/// (default: the framework's current stream). Raises TypeError or ValueError naming the problem.
ImportedBuffer import_array(nb::handle array, std::optional<uintptr_t> stream, bool writable);
/// Takes an unused DLPack capsule (what `__dlpack__()` returns) and views its tensor.
ImportedBuffer import_dlpack(nb::capsule capsule);

/// Drops a reference to a Python object from wherever a buffer's last copy goes (a thread without
/// the GIL, or the process's exit after Python's): the deleter of buffers that keep an array alive.
void release_python_reference(void *object);

/// Whether `object` is a torch.Tensor (false while PyTorch is not imported).
bool is_torch_tensor(nb::handle object);
/// A tensor's memory, read from the tensor itself: PyTorch's __dlpack__(stream=...) costs about
/// 11 µs a call, these reads half a microsecond.
ImportedBuffer import_torch_tensor(nb::handle tensor);
/// PyTorch's current stream on CUDA device `device`, as a handle.
uintptr_t torch_current_stream(int device);
/// A stream the caller names: an integer handle, or an object with `cuda_stream` (PyTorch) or
/// `ptr` (CuPy).
uintptr_t stream_handle(nb::handle stream);

/// A Python value as an Expr: an Expr, Var, RVar, RDom, Param, FuncRef, bool, int (Int(32), or
/// Int(64) when it does not fit) or float (Float(32), as Halide's Python bindings make them).
/// Raises TypeError naming what it got otherwise.
Expr to_expr(nb::handle value);
/// Adds Python's arithmetic, comparison and logic operators to a class that stands for an Expr
/// (`/` divides as ptxjit does, rounding integers down; `//` also floors floats; & | ~ are
/// logical on booleans, bitwise on integers; `**` is pow).
void add_expr_operators(nb::handle cls);
/// A Python tuple or list of such values, or one of them.
std::vector<Expr> to_exprs(nb::handle values);
/// A list of Range(min, extent) or (min, extent) pairs. Raises TypeError otherwise.
Region to_region(nb::handle bounds);

void bind_errors(nb::module_ &m);
void bind_expr(nb::module_ &m);
void bind_func(nb::module_ &m);
void bind_params(nb::module_ &m);
void bind_buffer(nb::module_ &m);
void bind_pipeline(nb::module_ &m);
void bind_handlers(nb::module_ &m);

} // namespace ptxjit::python

#endif
