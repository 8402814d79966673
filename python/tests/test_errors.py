"""Every wrong use from Python raises a Python exception that names what was wrong."""

import numpy as np
import pytest

import ptxjit as pj


def test_exception_kinds():
    assert issubclass(pj.RuntimeError, RuntimeError)
    assert issubclass(pj.TargetError, ValueError)
    assert issubclass(pj.CompileError, Exception)


def test_malformed_target_strings():
    with pytest.raises(pj.TargetError, match="cuda_capabilty_80"):
        pj.Target("host-cuda-cuda_capabilty_80")
    with pytest.raises(pj.TargetError):
        pj.Target("")
    assert pj.Target("x86-64-linux-cuda").has_gpu_feature()


def test_compile_errors_carry_the_library_message():
    x = pj.Var("x")
    f = pj.Func("f")
    with pytest.raises(pj.CompileError, match="not defined"):
        pj.Pipeline(f).realize([4])
    f[x] = x
    g = pj.Func("g")
    with pytest.raises(pj.CompileError, match="Func f has 1 dimensions but is called with 2 arguments"):
        g[x] = f[x, x]
    h = pj.Func("h")
    h[x] = x
    with pytest.raises(pj.CompileError, match="not_a_loop"):
        h.vectorize(pj.Var("not_a_loop"), 4)
        pj.Pipeline(h).realize([4])


def test_python_values_that_are_not_exprs():
    x = pj.Var("x")
    with pytest.raises(TypeError, match="str"):
        pj.Expr("a string")
    with pytest.raises(TypeError, match="truth value"):
        if x > 3:
            pass
    with pytest.raises(TypeError, match="dict"):
        x + {}
    with pytest.raises(ValueError, match="64 bits"):
        pj.Expr(2**70)
    with pytest.raises(TypeError, match="select"):
        pj.select(x > 0, 1)
    with pytest.raises(TypeError):
        pj.Func("f").tile(x, x, 4)


def test_params_refuse_values_they_cannot_hold():
    p = pj.Param(pj.UInt(8), "small")
    with pytest.raises(ValueError, match="does not fit"):
        p.set(256)
    with pytest.raises(ValueError, match="does not fit"):
        p.set(-1)
    with pytest.raises(TypeError, match="integer"):
        p.set(1.5)
    big = pj.Param(pj.UInt(64), "big", 2**64 - 1)
    assert big.get() == 2**64 - 1


def test_realize_errors_name_the_buffer(rng):
    x = pj.Var("x")
    inp = pj.ImageParam(pj.Float(32), 1, "inp")
    f = pj.Func("f")
    f[x] = inp[x + 5]
    p = pj.Pipeline(f)
    inp.set(rng.random(8, dtype=np.float32))
    with pytest.raises(pj.RuntimeError, match="inp"):
        p.realize([8])
    with pytest.raises(pj.RuntimeError, match="type|float|int"):
        p.realize(np.zeros(3, dtype=np.int32))


def test_arrays_ptxjit_cannot_view(rng):
    x = pj.Var("x")
    inp = pj.ImageParam(pj.Float(32), 2, "inp")
    with pytest.raises(ValueError, match="innermost"):
        inp.set(rng.random((4, 8), dtype=np.float32)[:, ::2])
    with pytest.raises(ValueError, match="type code"):
        inp.set(np.zeros((2, 2), dtype=np.complex64))
    f = pj.Func("f")
    f[x] = x
    with pytest.raises(ValueError, match="read-only"):
        pj.Pipeline(f).realize(np.broadcast_to(np.zeros(1, dtype=np.int32), (4,)))
    with pytest.raises(TypeError, match="__dlpack__"):
        pj.Pipeline(f).realize([[1, 2]])
    with pytest.raises(TypeError, match="__dlpack__"):
        pj.Buffer(object())


def test_read_only_inputs_are_copied(rng):
    x = pj.Var("x")
    inp = pj.ImageParam(pj.Int(32), 1, "inp")
    f = pj.Func("f")
    f[x] = inp[x] + 1
    a = rng.integers(0, 100, size=6, dtype=np.int32)
    a.flags.writeable = False
    inp.set(a)
    np.testing.assert_array_equal(pj.Pipeline(f).realize([6]), a + 1)
