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
    # Viewed by its strides; a pipeline that needs its last axis dense says so.
    inp.set(rng.random((4, 8), dtype=np.float32)[:, ::2])
    reads = pj.Func("reads")
    reads[x] = inp[x, 0]
    with pytest.raises(pj.RuntimeError, match="input buffer inp must be dense in dimension 0, but its stride there is 2"):
        pj.Pipeline(reads).realize([4])
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


def test_print_and_error_handlers_from_python():
    x = pj.Var("x")
    a = pj.ImageParam(pj.Float(32), 1, "a")
    f = pj.Func("f")
    f[x] = pj.print_when(x == 2, a[x] * 2, "twice a at 2 is")
    p = pj.Pipeline(f)
    printed, errors = [], []
    p.set_handlers(pj.Handlers(print=printed.append))
    a.set(np.array([0.5, 1.5, 2.5, 3.5], np.float32))
    out = p.realize([4])
    np.testing.assert_array_equal(out, [1, 3, 5, 7])
    assert len(printed) == 1 and "twice a at 2 is" in printed[0] and "5" in printed[0]
    # The call's handlers win over the pipeline's; an error reaches its handler, then raises.
    called = []
    with pytest.raises(pj.RuntimeError, match="a"):
        p.realize([9], handlers=pj.Handlers(print=called.append, error=errors.append))
    assert len(errors) == 1 and "a" in errors[0] and called == [] and len(printed) == 1
    p.realize([4], handlers=pj.Handlers(print=called.append))
    assert len(called) == 1 and len(printed) == 1
    # A handler that raises: the realize raises ptxjit.RuntimeError from it.
    def broken(message):
        raise KeyError("broken handler")
    p.set_handlers(pj.Handlers(error=broken))
    with pytest.raises(pj.RuntimeError) as raised:
        p.realize([9])
    assert isinstance(raised.value.__cause__, KeyError)
    p.set_handlers(None)
    with pytest.raises(ValueError, match="set_default_handlers"):
        p.realize([4], handlers=pj.Handlers(device_malloc=lambda c, s, n: 0, device_free=lambda c, s, q: None))
    with pytest.raises(ValueError, match="together"):
        pj.set_default_handlers(pj.Handlers(device_malloc=lambda c, s, n: 0))


def test_default_handlers_from_python():
    x = pj.Var("x")
    f = pj.Func("f")
    f[x] = pj.print_when(x == 1, x, "x is")
    printed = []
    previous = pj.set_default_handlers(pj.Handlers(print=printed.append))
    try:
        pj.Pipeline(f).realize([3])
        assert printed == ["1 x is\n"]
    finally:
        pj.set_default_handlers(previous)
    pj.Pipeline(f).realize([3])
    assert len(printed) == 1
