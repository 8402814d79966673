#ifndef PTXJIT_PYTHON_BINDINGS_H
#define PTXJIT_PYTHON_BINDINGS_H

// The pieces of the extension module, one a file, and the conversions they share. Only ptxjit's
// public headers are used: the module is a user of the library like any other.

#include "ptxjit.h"

#include <nanobind/nanobind.h>

#include <memory>
#include <vector>

namespace ptxjit::python {

namespace nb = nanobind;

/// A scalar Param of a type chosen at run time (C++'s Param<T> fixes it at compile time).
struct ScalarParam {
  std::shared_ptr<ParameterContents> contents;
  Type type;
};

/// An array's memory viewed through DLPack, and the CUDA device it is on (-1: host memory).
struct ImportedBuffer {
  RawBuffer buffer;
  int cuda_device = -1;
};

/// Takes an unused DLPack capsule (what `__dlpack__()` returns) and views its tensor.
ImportedBuffer import_dlpack(nb::capsule capsule);

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

void bind_errors(nb::module_ &m);
void bind_expr(nb::module_ &m);
void bind_func(nb::module_ &m);
void bind_params(nb::module_ &m);
void bind_buffer(nb::module_ &m);
void bind_pipeline(nb::module_ &m);

} // namespace ptxjit::python

#endif
