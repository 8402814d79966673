"""The language from Python on the host target, against NumPy references on random data."""

import numpy as np
import pytest

import ptxjit as pj


def blur_pipeline():
    x, y = pj.Var("x"), pj.Var("y")
    inp = pj.ImageParam(pj.Float(32), 2, "inp")
    bx, by = pj.Func("blur_x"), pj.Func("blur_y")
    bx[x, y] = (inp[x - 1, y] + inp[x, y] + inp[x + 1, y]) / 3
    by[x, y] = (bx[x, y - 1] + bx[x, y] + bx[x, y + 1]) / 3
    return inp, bx, by, x, y


def blur_reference(a):
    bx = (a[:, :-2] + a[:, 1:-1] + a[:, 2:]) / np.float32(3)
    return (bx[:-2, :] + bx[1:-1, :] + bx[2:, :]) / np.float32(3)


@pytest.mark.parametrize("schedule", ["inline", "root", "tiled"])
def test_blur_with_schedules(rng, schedule):
    inp, bx, by, x, y = blur_pipeline()
    xi, yi = pj.Var("xi"), pj.Var("yi")
    if schedule == "root":
        bx.compute_root().vectorize(x, 8)
    elif schedule == "tiled":
        by.tile(x, y, xi, yi, 32, 16).vectorize(xi, 8).parallel(y)
        bx.compute_at(by, x).vectorize(x, 8)
    a = rng.random((67, 93), dtype=np.float32)
    buffer = pj.Buffer(a)
    buffer.set_min([-1, -1])
    inp.set(buffer)
    out = pj.Pipeline(by).realize([91, 65])
    assert out.shape == (65, 91) and out.dtype == np.float32
    np.testing.assert_allclose(out, blur_reference(a), rtol=1e-6)


def test_axes_are_reversed(rng):
    x, y, c = pj.Var("x"), pj.Var("y"), pj.Var("c")
    inp = pj.ImageParam(pj.Int(32), 3, "inp")
    f = pj.Func("f")
    f[x, y, c] = inp[x, y, c] * 100 + x * 10000 + y * 1000000 + c
    a = rng.integers(-50, 50, size=(3, 5, 7), dtype=np.int32)  # a[c, y, x]
    inp.set(a)
    out = pj.Pipeline(f).realize([7, 5, 3])
    c_, y_, x_ = np.meshgrid(np.arange(3), np.arange(5), np.arange(7), indexing="ij")
    np.testing.assert_array_equal(out, a * 100 + x_ * 10000 + y_ * 1000000 + c_)


def test_realize_into_given_arrays_and_strided_inputs(rng):
    x, y = pj.Var("x"), pj.Var("y")
    inp = pj.ImageParam(pj.Float(64), 2, "inp")
    f = pj.Func("f")
    f[x, y] = pj.sqrt(pj.abs(inp[x, y])) + pj.cast(pj.Float(64), x - y)
    big = rng.standard_normal((40, 60))
    view = big[::2, 5:45]  # rows strided, columns dense
    inp.set(view)
    out = np.zeros((20, 40))
    assert pj.Pipeline(f).realize(out) is None
    xs, ys = np.meshgrid(np.arange(40), np.arange(20))
    np.testing.assert_allclose(out, np.sqrt(np.abs(view)) + (xs - ys), rtol=1e-12)


def test_select_min_max_clamp_and_math(rng):
    x = pj.Var("x")
    inp = pj.ImageParam(pj.Float(32), 1, "inp")
    v = inp[x]
    f = pj.Func("f")
    f[x] = pj.select(v < -0.5, pj.exp(v), v > 0.5, pj.log(v), pj.tanh(v)) + pj.clamp(v, -0.25, 0.25) \
        + pj.max(v, 0, x * 0.01) - pj.min(v, 1.0) + pj.floor(v * 4) + v ** 2
    a = rng.uniform(-1, 1, size=1000).astype(np.float32)
    inp.set(a)
    out = pj.Pipeline(f).realize([1000])
    xs = np.arange(1000, dtype=np.float32)
    with np.errstate(invalid="ignore", divide="ignore"):
        chosen = np.where(a < -0.5, np.exp(a), np.where(a > 0.5, np.log(a), np.tanh(a)))
    ref = chosen + np.clip(a, -0.25, 0.25) + np.maximum(np.maximum(a, 0), xs * np.float32(0.01)) \
        - np.minimum(a, 1) + np.floor(a * 4) + a * a
    np.testing.assert_allclose(out, ref, rtol=2e-6, atol=2e-6)


def test_integer_division_and_casts(rng):
    x = pj.Var("x")
    inp = pj.ImageParam(pj.Int(32), 1, "inp")
    f = pj.Func("f")
    # / and // round integers down (Halide's division), % is Euclidean, as in Python.
    f[x] = (inp[x] / 7) * 1000000 + (inp[x] // 7) * 1000 + inp[x] % 7
    g = pj.Func("g")
    g[x] = pj.u8_sat(inp[x]) + pj.cast(pj.UInt(8), 0)
    a = rng.integers(-1000, 1000, size=500, dtype=np.int32)
    inp.set(a)
    out = pj.Pipeline(f).realize([500])
    np.testing.assert_array_equal(out, (a // 7) * 1000000 + (a // 7) * 1000 + a % 7)
    u = pj.Pipeline(g).realize([500])
    assert u.dtype == np.uint8
    np.testing.assert_array_equal(u, np.clip(a, 0, 255).astype(np.uint8))


def test_params_of_every_kind(rng):
    x = pj.Var("x")
    scale = pj.Param(pj.Float(32), "scale", 2.5)
    offset = pj.Param(pj.Int(16), "offset")
    flag = pj.Param(pj.Bool(), "flag")
    offset.set(-7)
    flag.set(True)
    f = pj.Func("f")
    f[x] = pj.select(flag, x * scale + offset, 0.0)
    p = pj.Pipeline(f)
    np.testing.assert_allclose(p.realize([10]), np.arange(10) * 2.5 - 7)
    scale.set(0.5)
    flag.set(False)
    np.testing.assert_array_equal(p.realize([4]), np.zeros(4))
    assert offset.get() == -7 and scale.get() == 0.5 and flag.get() is False


def test_reduction_histogram_and_inline_sum(rng):
    x = pj.Var("x")
    inp = pj.ImageParam(pj.UInt(8), 2, "inp")
    r = pj.RDom(inp)
    hist = pj.Func("hist")
    hist[x] = 0
    hist[pj.cast(pj.Int(32), inp[r.x, r.y]) // 16] += 1
    a = rng.integers(0, 256, size=(37, 53), dtype=np.uint8)
    inp.set(a)
    out = pj.Pipeline(hist).realize([16])
    np.testing.assert_array_equal(out, np.bincount((a // 16).ravel(), minlength=16))

    rows = pj.Func("rows")
    y = pj.Var("y")
    k = pj.RDom([(0, 53)], "k")
    rows[y] = pj.sum(pj.cast(pj.Int(32), inp[k, y]))
    np.testing.assert_array_equal(pj.Pipeline(rows).realize([37]), a.astype(np.int64).sum(axis=1))


def test_update_definitions_with_rdom_and_where(rng):
    x = pj.Var("x")
    r = pj.RDom([(0, 10), (0, 10)], "r")
    r.where(r.x < r.y)
    f = pj.Func("f")
    f[x] = x
    f[r.x] += r.y
    f[r.y] *= 2
    out = pj.Pipeline(f).realize([10])
    ref = np.arange(10)
    for j in range(10):
        for i in range(10):
            if i < j:
                ref[i] += j
    for j in range(10):
        for i in range(10):
            if i < j:
                ref[j] *= 2
    np.testing.assert_array_equal(out, ref)


def test_tuples_argmax_and_several_outputs(rng):
    x = pj.Var("x")
    inp = pj.ImageParam(pj.Float(32), 1, "inp")
    pair = pj.Func("pair")
    pair[x] = (inp[x] * 2, pj.cast(pj.Int(32), x))
    assert pair.outputs() == 2
    best = pj.Func("best")
    r = pj.RDom([(0, 64)], "r")
    best[()] = tuple(pj.argmax(inp[r]))
    a = rng.standard_normal(64).astype(np.float32)
    inp.set(a)
    doubled, index = pj.Pipeline(pair).realize([64])
    np.testing.assert_allclose(doubled, a * 2)
    np.testing.assert_array_equal(index, np.arange(64))
    location, value = pj.Pipeline(best).realize([])
    assert int(location) == int(np.argmax(a)) and float(value) == a.max()
    square = pj.Func("square")
    square[x] = inp[x] * inp[x]
    d2, i2, sq = pj.Pipeline([pair, square]).realize([64])
    np.testing.assert_allclose(sq, a * a)
    np.testing.assert_array_equal(i2, np.arange(64))


@pytest.mark.parametrize("condition", ["repeat_edge", "constant_exterior", "mirror_image", "mirror_interior"])
def test_boundary_conditions(rng, condition):
    x, y = pj.Var("x"), pj.Var("y")
    inp = pj.ImageParam(pj.Float(32), 2, "inp")
    if condition == "constant_exterior":
        clamped = pj.BoundaryConditions.constant_exterior(inp, 0.5)
        pad = {"mode": "constant", "constant_values": 0.5}
    else:
        clamped = getattr(pj.BoundaryConditions, condition)(inp)
        pad = {"mode": {"repeat_edge": "edge", "mirror_image": "symmetric", "mirror_interior": "reflect"}[condition]}
    f = pj.Func("f")
    f[x, y] = clamped[x - 2, y] + clamped[x + 2, y + 3]
    a = rng.random((20, 30), dtype=np.float32)
    inp.set(a)
    out = pj.Pipeline(f).realize([30, 20])
    padded = np.pad(a, ((0, 3), (2, 2)), **pad)
    np.testing.assert_allclose(out, padded[0:20, 0:30] + padded[3:23, 4:34], rtol=1e-6)


def test_boundary_conditions_of_an_image_over_a_region_of_its_own(rng):
    x, y = pj.Var("x"), pj.Var("y")
    inp = pj.ImageParam(pj.Float(32), 2, "inp")
    edge = pj.BoundaryConditions.repeat_edge(inp, [(2, 5), (inp.dim(1).min(), inp.dim(1).extent())])
    outside = pj.BoundaryConditions.constant_exterior(inp, -1.0, [(0, 4), (0, 3)])
    f = pj.Func("f")
    f[x, y] = edge[x, y] + outside[x, y] * 10
    a = rng.random((6, 9), dtype=np.float32)
    inp.set(a)
    out = pj.Pipeline(f).realize([9, 6])
    expected = a[:, np.clip(np.arange(9), 2, 6)].copy()
    inner = np.full((6, 9), -1.0, dtype=np.float32)
    inner[0:3, 0:4] = a[0:3, 0:4]
    np.testing.assert_allclose(out, expected + inner * 10, rtol=1e-6)


def test_hoist_storage_allocates_once_a_row(rng):
    x, y, xo, xi = pj.Var("x"), pj.Var("y"), pj.Var("xo"), pj.Var("xi")
    inp = pj.ImageParam(pj.Float(32), 2, "inp")
    g, f = pj.Func("g"), pj.Func("f")
    g[x, y] = inp[x, y] * 2
    f[x, y] = g[x, y] + g[x + 1, y]
    f.split(x, xo, xi, 8)
    g.compute_at(f, xo).hoist_storage(f, y)
    a = rng.random((6, 33), dtype=np.float32)
    inp.set(a)
    out = pj.Pipeline(f).realize([32, 6])
    np.testing.assert_allclose(out, a[:, 0:32] * 2 + a[:, 1:33] * 2, rtol=1e-6)
    stmt = pj.Pipeline(f).lowered_stmt()
    assert stmt.index("allocate g[") < stmt.index("for (f.s0.xo")
    # Halide's partitioning hints check their loops and change nothing.
    f.never_partition(xo).always_partition_all()
    with pytest.raises(pj.CompileError, match="never_partition of f.s0: q is not a loop"):
        f.never_partition(pj.Var("q"))


def test_gpu_schedule_is_lowered_for_a_cuda_target_without_a_device():
    x, y, xi, yi = pj.Var("x"), pj.Var("y"), pj.Var("xi"), pj.Var("yi")
    f = pj.Func("f")
    f[x, y] = x + y
    f.gpu_tile(x, y, xi, yi, 16, 16)
    ptx = pj.Pipeline(f).compile_to_ptx(pj.Target("host-cuda-cuda_capability_80"))
    assert ".target sm_80" in ptx and ".entry" in ptx


def test_gpu_tile_in_three_dimensions():
    x, y, z, xi, yi, zi = (pj.Var(n) for n in ("x", "y", "z", "xi", "yi", "zi"))
    f = pj.Func("f")
    f[x, y, z] = x + y * z
    f.gpu_tile(x, y, z, xi, yi, zi, 8, 8, 2)
    nest = pj.Pipeline(f).loop_nest()
    for loop in ("x", "y", "z"):
        assert f"gpu_block f.s0.{loop}:" in nest and f"gpu_thread f.s0.{loop}i:" in nest, nest
    with pytest.raises(TypeError, match="gpu_tile takes"):
        f.gpu_tile(x, y, z, xi, yi, 8, 8, 2)


def test_stages_specialize_and_loop_nest():
    x, y, xo, xi = pj.Var("x"), pj.Var("y"), pj.Var("xo"), pj.Var("xi")
    wide = pj.Param(pj.Bool(), "wide", True)
    f = pj.Func("f")
    f[x, y] = x * y
    f[x, 0] = f[x, 0] + 1
    f.split(x, xo, xi, 8, tail=pj.TailStrategy.RoundUp).reorder(xi, y, xo)
    f.update(0).vectorize(x, 4)
    f.specialize(wide).parallel(y)
    p = pj.Pipeline(f)
    nest = p.loop_nest()
    assert "xo" in nest and "xi" in nest
    out = p.realize([16, 3])
    ref = np.outer(np.arange(3), np.arange(16))
    ref[0] += 1
    np.testing.assert_array_equal(out, ref)


def bfloat16_round(values):
    """float32 values rounded to bfloat16 (to nearest, ties to even), as float32."""
    bits = np.asarray(values, np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return rounded.astype(np.uint32).view(np.float32)


def test_float16_and_bfloat16(rng):
    # NumPy's float16 arithmetic rounds each operation to float16, as ptxjit does with strict_float.
    x = pj.Var("x")
    a, b = pj.ImageParam(pj.Float(16), 1, "a"), pj.ImageParam(pj.Float(16), 1, "b")
    k = pj.Param(pj.Float(16), "k", 1.7)
    f = pj.Func("f")
    f[x] = (a[x] * b[x] + k, pj.sqrt(pj.abs(a[x])) - b[x], pj.cast(pj.Int(32), a[x] * 8))
    f.vectorize(x, 8)
    p = pj.Pipeline(f)
    p.compile_jit(pj.Target("host-strict_float"))
    av = (rng.standard_normal(1000) * 30).astype(np.float16)
    bv = (rng.standard_normal(1000) * 30).astype(np.float16)
    a.set(av)
    b.set(bv)
    prod, root, scaled = p.realize([1000])
    assert prod.dtype == np.float16 and scaled.dtype == np.int32
    kv = np.float16(1.7)
    assert k.get() == float(kv)
    np.testing.assert_array_equal(prod, av * bv + kv)
    np.testing.assert_array_equal(root, np.sqrt(np.abs(av)) - bv)
    np.testing.assert_array_equal(scaled, (av * np.float16(8)).astype(np.int32))

    # bfloat16 inside a pipeline of float32 arrays (NumPy has no bfloat16 arrays).
    c = pj.ImageParam(pj.Float(32), 1, "c")
    g = pj.Func("g")
    h = pj.cast(pj.BFloat(16), c[x])
    g[x] = pj.cast(pj.Float(32), h * h + h)
    assert str(h.type()) == "bfloat16"
    gp = pj.Pipeline(g)
    gp.compile_jit(pj.Target("host-strict_float"))
    cv = (rng.standard_normal(999) * 100).astype(np.float32)
    c.set(cv)
    hv = bfloat16_round(cv)
    np.testing.assert_array_equal(gp.realize([999]), bfloat16_round(bfloat16_round(hv * hv) + hv))
    with pytest.raises(ValueError, match="no type int12"):
        pj.Int(12)
    with pytest.raises(ValueError, match="NumPy has no bfloat16"):
        bp = pj.Func("bp")
        bp[x] = h
        pj.Pipeline(bp).realize([4])


def test_infer_arguments():
    x = pj.Var("x")
    a = pj.ImageParam(pj.UInt(8), 1, "a")
    k = pj.Param(pj.Int(32), "k", 3)
    f = pj.Func("f")
    f[x] = a[x] + k
    p = pj.Pipeline(f)
    names = [(arg.name, arg.is_buffer, str(arg.type)) for arg in p.infer_arguments()]
    assert names == [("a", True, "uint8"), ("k", False, "int32")]
    assert p.infer_arguments()[0].device_address == 0
    a.set(np.arange(5, dtype=np.uint8))
    np.testing.assert_array_equal(p.realize([5]), np.arange(5) + 3)  # host inputs: a NumPy array


def test_mux_and_likely():
    x, y, c = pj.Var("x"), pj.Var("y"), pj.Var("c")
    inp = pj.ImageParam(pj.Float(32), 2, "inp")
    f = pj.Func("f")
    f[x, y, c] = pj.mux(c, [inp[x, y] * 2, inp[x, y] + 1, -inp[pj.likely(x), y]])
    a = np.random.default_rng(3).random((4, 6), dtype=np.float32)
    inp.set(a)
    out = pj.Pipeline(f).realize([6, 4, 4])
    np.testing.assert_allclose(out[0], a * 2, rtol=1e-6)
    np.testing.assert_allclose(out[1], a + 1, rtol=1e-6)
    np.testing.assert_allclose(out[2], -a, rtol=1e-6)
    np.testing.assert_allclose(out[3], -a, rtol=1e-6)  # past the end: the last value


def test_bit_counts_rounding_division_and_more_math(rng):
    x = pj.Var("x")
    inp = pj.ImageParam(pj.Int(16), 1, "inp")
    den = pj.ImageParam(pj.Int(16), 1, "den")
    counts, division = pj.Func("counts"), pj.Func("division")
    counts[x] = pj.i32(pj.popcount(inp[x])) * 10000 + pj.i32(pj.count_leading_zeros(inp[x])) * 100 \
        + pj.i32(pj.count_trailing_zeros(inp[x]))
    division[x] = pj.i32(pj.div_round_to_zero(inp[x], den[x])) * 100000 + pj.i32(pj.mod_round_to_zero(inp[x], den[x]))
    a = rng.integers(-32768, 32767, size=300, dtype=np.int16)
    a[:3] = [0, -1, -32768]
    d = rng.integers(-9, 9, size=300, dtype=np.int16)
    d[d == 0] = 5
    d[2] = -1  # -32768 / -1 overflows int16 and wraps, as in Halide
    inp.set(a)
    den.set(d)
    bits = a.astype(np.uint16)
    popcounts = np.array([bin(v).count("1") for v in bits])
    leading = np.array([16 - int(v).bit_length() for v in bits])
    trailing = np.array([16 if v == 0 else (int(v) & -int(v)).bit_length() - 1 for v in bits])
    np.testing.assert_array_equal(pj.Pipeline(counts).realize([300]), popcounts * 10000 + leading * 100 + trailing)
    quotient = np.trunc(a / d).astype(np.int32)
    wrapped_quotient = quotient.astype(np.int16).astype(np.int32)
    np.testing.assert_array_equal(pj.Pipeline(division).realize([300]),
                                  wrapped_quotient * 100000 + (a.astype(np.int32) - quotient * d))

    v = pj.ImageParam(pj.Float(32), 1, "v")
    math = pj.Func("math")
    math[x] = pj.erf(v[x]) + pj.hypot(v[x], 2.0) + pj.fract(v[x] * 5) + pj.fast_inverse(v[x] + 2) \
        + pj.fast_inverse_sqrt(v[x] + 2) + pj.fast_sin(v[x]) + pj.fast_cos(v[x]) \
        + pj.unsafe_promise_clamped(v[x], -1, 1) + v[pj.likely_if_innermost(x)]
    f = rng.uniform(-1, 1, size=200).astype(np.float64)
    v.set(f.astype(np.float32))
    f = f.astype(np.float32).astype(np.float64)
    erf = np.array([__import__("math").erf(t) for t in f])
    ref = erf + np.hypot(f, 2) + np.fmod(f * 5, 1) + 1 / (f + 2) + 1 / np.sqrt(f + 2) + np.sin(f) + np.cos(f) + 2 * f
    np.testing.assert_allclose(pj.Pipeline(math).realize([200]), ref, rtol=1e-5, atol=1e-5)


def test_reorder_storage_keeps_values(rng):
    x, y = pj.Var("x"), pj.Var("y")
    inp = pj.ImageParam(pj.Float(32), 2, "inp")
    columns, out = pj.Func("columns"), pj.Func("out")
    columns[x, y] = inp[x, y] * 2
    out[x, y] = columns[y, x] + columns[y, x + 1]
    columns.compute_root().reorder_storage(y, x)
    a = rng.random((30, 20), dtype=np.float32)  # 20 wide, 30 tall
    inp.set(a)
    result = pj.Pipeline(out).realize([29, 20])  # out is 29 wide (x), 20 tall (y)
    np.testing.assert_allclose(result, (a[:29, :] * 2 + a[1:30, :] * 2).T, rtol=1e-6)
    with pytest.raises(pj.CompileError, match="not one of its dimensions"):
        columns.reorder_storage(pj.Var("z"))


def test_rename_names_loops_anew(rng):
    x, y, xr, xo, xi = pj.Var("x"), pj.Var("y"), pj.Var("xr"), pj.Var("xo"), pj.Var("xi")
    inp = pj.ImageParam(pj.Float(32), 2, "inp")
    producer, out = pj.Func("producer"), pj.Func("out")
    producer[x, y] = inp[x, y] * 2
    out[x, y] = producer[x, y] + producer[x + 1, y]
    out.rename(x, xr).split(xr, xo, xi, 8).vectorize(xi).parallel(y)
    producer.compute_at(out, xo)
    a = rng.random((13, 41), dtype=np.float32)  # 41 wide, 13 tall
    inp.set(a)
    result = pj.Pipeline(out).realize([40, 13])
    np.testing.assert_allclose(result, a[:, :40] * 2 + a[:, 1:41] * 2, rtol=1e-6)
    with pytest.raises(pj.CompileError, match="x is not a loop of out"):
        out.rename(x, pj.Var("again"))


def test_loop_levels_are_handles_set_later(rng):
    x, y = pj.Var("x"), pj.Var("y")
    inp = pj.ImageParam(pj.Float(32), 2, "inp")
    producer, out = pj.Func("producer"), pj.Func("out")
    producer[x, y] = inp[x, y] * 2
    out[x, y] = producer[x, y] + producer[x, y + 1]
    level = pj.LoopLevel()
    producer.compute_at(level)
    a = rng.random((12, 20), dtype=np.float32)
    inp.set(a)
    with pytest.raises(pj.CompileError, match="undefined"):
        pj.Pipeline(out).realize([20, 11])
    level.set(pj.LoopLevel(out, y))
    assert repr(level) == "ptxjit.LoopLevel(out.y)" and level.var() == "y"
    np.testing.assert_allclose(pj.Pipeline(out).realize([20, 11]), a[:11] * 2 + a[1:12] * 2, rtol=1e-6)
    producer.compute_at(pj.LoopLevel(out, y)).store_at(pj.LoopLevel.root())
    np.testing.assert_allclose(pj.Pipeline(out).realize([20, 11]), a[:11] * 2 + a[1:12] * 2, rtol=1e-6)
    assert pj.LoopLevel.root().is_root() and pj.LoopLevel.inlined().is_inlined()


def test_align_storage_pads_and_keeps_values(rng):
    x, y = pj.Var("x"), pj.Var("y")
    inp = pj.ImageParam(pj.Float(32), 2, "inp")
    table, out = pj.Func("table"), pj.Func("out")
    table[x, y] = inp[x, y] * 2
    out[x, y] = table[x, y] + table[x + 1, y]
    table.compute_root().align_storage(x, 16)
    a = rng.random((9, 30), dtype=np.float32)
    inp.set(a)
    np.testing.assert_allclose(pj.Pipeline(out).realize([29, 9]), a[:, :29] * 2 + a[:, 1:30] * 2, rtol=1e-6)
    with pytest.raises(pj.CompileError, match="positive constant"):
        table.align_storage(x, 0)


def test_rfactor_sums_chunks_in_parallel(rng):
    inp = pj.ImageParam(pj.Int(32), 1, "inp")
    a = rng.integers(-1000, 1000, size=1001, dtype=np.int32)
    inp.set(a)
    r = pj.RDom([(0, 1001)], "r")
    ro, ri, u = pj.RVar("ro"), pj.RVar("ri"), pj.Var("u")
    total = pj.Func("total")
    total[()] = 0
    total[()] += inp[r]
    total.update().split(r, ro, ri, 64)
    partial = total.update().rfactor(ro, u)
    partial.compute_root().update().parallel(u)
    assert int(pj.Pipeline(total).realize([])) == int(a.sum())

    largest = pj.Func("largest")
    largest[()] = -(2**31)
    largest[()] = pj.max(largest[()], inp[r])
    largest.update().split(r, ro, ri, 100)
    largest.update().rfactor([(ri, u)]).compute_root().update().vectorize(u, 4)
    assert int(pj.Pipeline(largest).realize([])) == int(a.max())
    with pytest.raises(pj.CompileError, match="is not an RVar loop"):
        largest.update().rfactor(pj.RVar("nowhere"), u)


def test_allow_race_conditions_runs_a_scatter_in_parallel(rng):
    n = 1000
    values = rng.integers(-100, 100, size=n, dtype=np.int32)
    perm = ((np.arange(n) * 337 + 5) % n).astype(np.int32)
    pin, pperm = pj.ImageParam(pj.Int(32), 1, "pin"), pj.ImageParam(pj.Int(32), 1, "pperm")
    pin.set(values)
    pperm.set(perm)
    x = pj.Var("x")
    r = pj.RDom([(0, n)], "r")
    out = pj.Func("scatter")
    out[x] = 0
    out[pj.clamp(pperm[r], 0, n - 1)] = pin[r]
    out.update().allow_race_conditions().parallel(r)
    expected = np.zeros(n, dtype=np.int32)
    expected[perm] = values
    np.testing.assert_array_equal(pj.Pipeline(out).realize([n]), expected)


def test_fixed_point_intrinsics(rng):
    a = rng.integers(0, 256, size=300, dtype=np.uint8)
    b = rng.integers(0, 256, size=300, dtype=np.uint8)
    pa, pb = pj.ImageParam(pj.UInt(8), 1, "pa"), pj.ImageParam(pj.UInt(8), 1, "pb")
    pa.set(a)
    pb.set(b)
    x = pj.Var("x")
    wide, sat, half, scaled = pj.Func("wide"), pj.Func("sat"), pj.Func("half"), pj.Func("scaled")
    wide[x] = pj.widening_mul(pa[x], pb[x])
    sat[x] = pj.saturating_sub(pa[x], pb[x])
    half[x] = pj.rounding_halving_add(pa[x], pb[x])
    scaled[x] = pj.rounding_mul_shift_right(pa[x], pb[x], 8)
    wa, wb = a.astype(np.int64), b.astype(np.int64)
    np.testing.assert_array_equal(pj.Pipeline(wide).realize([300]), wa * wb)
    np.testing.assert_array_equal(pj.Pipeline(sat).realize([300]), np.maximum(wa - wb, 0))
    np.testing.assert_array_equal(pj.Pipeline(half).realize([300]), (wa + wb + 1) >> 1)
    np.testing.assert_array_equal(pj.Pipeline(scaled).realize([300]), np.minimum((wa * wb + 128) >> 8, 255))
    with pytest.raises(pj.CompileError, match="no integer type is twice as wide"):
        pj.widening_add(pj.cast(pj.Int(64), x), 1)


def test_undef_leaves_a_value_unwritten():
    x = pj.Var("x")
    r = pj.RDom([(2, 30)], "r")
    fib = pj.Func("fib")
    fib[x] = pj.undef(pj.Int(32))
    fib[0] = 0
    fib[1] = 1
    fib[r] = fib[r - 1] + fib[r - 2]
    out = pj.Pipeline(fib).realize([32])
    expected = [0, 1]
    for _ in range(30):
        expected.append(expected[-1] + expected[-2])
    np.testing.assert_array_equal(out, expected)


def test_random_numbers_are_uniform_and_the_same_under_any_schedule():
    x, y, xi = pj.Var("x"), pj.Var("y"), pj.Var("xi")
    noise = pj.Func("noise")
    shared = pj.random_float()
    noise[x, y] = (shared, shared + shared, pj.random_uint())
    plain, doubled, bits = pj.Pipeline(noise).realize([300, 200])
    assert plain.dtype == np.float32 and bits.dtype == np.uint32
    assert 0 <= plain.min() and plain.max() < 1
    assert abs(plain.mean() - 0.5) < 0.01
    np.testing.assert_array_equal(doubled, plain * 2)
    assert (bits >= 2**31).mean() > 0.45
    noise.split(x, x, xi, 8).vectorize(xi).parallel(y)
    again = pj.Pipeline(noise).realize([300, 200])
    np.testing.assert_array_equal(again[0], plain)
    np.testing.assert_array_equal(again[2], bits)
    seed = pj.Param(pj.Int(32), "seed", 1)
    seeded = pj.Func("seeded")
    seeded[x] = pj.random_int(seed)
    first = pj.Pipeline(seeded).realize([100])
    seed.set(2)
    assert (pj.Pipeline(seeded).realize([100]) != first).all()
    with pytest.raises(pj.CompileError, match="the seed of random_float must be an int32"):
        pj.random_float(pj.f32(x))


def test_unscheduled_states_a_stage_has_no_schedule():
    x = pj.Var("x")
    f = pj.Func("unscheduled")
    f[x] = x
    f[x] += 1
    f.update(0).unscheduled()
    np.testing.assert_array_equal(pj.Pipeline(f).realize([4]), [1, 2, 3, 4])
    with pytest.raises(pj.CompileError, match="was given a schedule already"):
        f.update(0).unscheduled()


def test_fold_storage_keeps_the_rows_a_slid_func_needs(rng):
    inp, bx, by, x, y = blur_pipeline()
    bx.store_root().compute_at(by, y).fold_storage(y, 3)
    assert "* 3]" in pj.Pipeline(by).lowered_stmt(pj.Target("host"))
    a = rng.random((40, 50), dtype=np.float32)
    buffer = pj.Buffer(a)
    buffer.set_min([-1, -1])
    inp.set(buffer)
    np.testing.assert_allclose(pj.Pipeline(by).realize([48, 38]), blur_reference(a), rtol=1e-6)
    bx.fold_storage(y, 2)
    with pytest.raises(pj.CompileError, match="needs 3 rows of it in y"):
        pj.Pipeline(by).realize([48, 38])


def test_prefetch_hints_change_no_value(rng):
    inp, bx, by, x, y = blur_pipeline()
    bx.compute_at(by, y)
    by.prefetch(inp, y, offset=2, strategy=pj.PrefetchBoundStrategy.Clamp).prefetch(inp, x, y, 1)
    assert "prefetch(" in pj.Pipeline(by).lowered_stmt(pj.Target("host"))
    a = rng.random((40, 50), dtype=np.float32)
    buffer = pj.Buffer(a)
    buffer.set_min([-1, -1])
    inp.set(buffer)
    np.testing.assert_allclose(pj.Pipeline(by).realize([48, 38]), blur_reference(a), rtol=1e-6)
    with pytest.raises(pj.CompileError, match="loop x is inside loop y"):
        by.prefetch(inp, y, x)
    with pytest.raises(TypeError, match="prefetch takes a Func or an ImageParam"):
        by.prefetch(3, y)


def test_clone_in_gives_a_consumer_a_copy_scheduled_on_its_own(rng):
    x, y = pj.Var("x"), pj.Var("y")
    f, g, h = pj.Func("cf"), pj.Func("cg"), pj.Func("ch")
    f[x, y] = x + y * 2
    g[x, y] = f[x, y] * 3
    h[x, y] = f[x, y] + g[x, y]
    f.compute_root()
    clone = f.clone_in(g)
    assert clone.name() == "cf_clone_in_cg"
    clone.compute_at(g, x)
    g.compute_root()
    assert "produce cf_clone_in_cg" in pj.Pipeline(h).loop_nest()
    out = pj.Pipeline(h).realize([6, 5])
    xs, ys = np.meshgrid(np.arange(6), np.arange(5))
    np.testing.assert_array_equal(out, (xs + ys * 2) * 4)
    assert f.clone_in([g]).name() == clone.name()


def test_require_fails_the_realize_with_its_message():
    x = pj.Var("x")
    p = pj.Param(pj.Int(32), "p", 3)
    f = pj.Func("required")
    f[x] = pj.require(p > 0, x * p, "p must be positive, not", p)
    np.testing.assert_array_equal(pj.Pipeline(f).realize([4]), [0, 3, 6, 9])
    p.set(-2)
    with pytest.raises(pj.RuntimeError, match=r"requirement failed: \(p > 0\): p must be positive, not -2"):
        pj.Pipeline(f).realize([4])


def test_estimates_are_checked_and_change_nothing(rng):
    def make(estimates):
        inp, bx, by, x, y = blur_pipeline()
        gain = pj.Param(pj.Float(32), "gain", 2.0)
        out = pj.Func("scaled")
        out[x, y] = by[x, y] * gain
        if estimates:
            inp.set_estimates([(0, 1920), pj.Range(0, 1080)])
            inp.dim(0).set_estimate(0, 1920)
            gain.set_estimate(0.5)
            out.set_estimates([(0, 1918), (0, 1078)]).set_estimate(y, 0, 1078)
        return inp, out, x
    inp, out, x = make(True)
    _, plain, _ = make(False)
    assert pj.Pipeline(out).lowered_stmt(pj.Target("host")) == pj.Pipeline(plain).lowered_stmt(pj.Target("host"))
    a = rng.random((20, 30), dtype=np.float32)
    buffer = pj.Buffer(a)
    buffer.set_min([-1, -1])
    inp.set(buffer)
    np.testing.assert_allclose(pj.Pipeline(out).realize([28, 18]), blur_reference(a) * 2, rtol=1e-6)
    with pytest.raises(pj.CompileError, match="z is not one of its arguments"):
        out.set_estimate(pj.Var("z"), 0, 8)
    with pytest.raises(pj.CompileError, match="1 ranges for its 2 dimensions"):
        out.set_estimates([(0, 8)])
    with pytest.raises(TypeError, match="a region is a list"):
        out.set_estimates([0, 8])
    gain = pj.Param(pj.Float(32), "gain", 3.0)
    with pytest.raises(TypeError, match="Param gain of type float32 takes a number"):
        gain.set_estimate("fast")
    assert gain.get() == 3.0  # an estimate is not a value


def test_interleaved_output_through_output_buffer(rng):
    x, y, c = pj.Var("x"), pj.Var("y"), pj.Var("c")
    inp = pj.ImageParam(pj.UInt(8), 3, "inp")
    f = pj.Func("f")
    f[x, y, c] = inp[x, y, c] // 2 + 7
    out_buffer = f.output_buffer()
    out_buffer.dim(0).set_stride(3).dim(2).set_stride(1).set_bounds(0, 3)
    assert out_buffer.name() == "f" and out_buffer.dimensions() == 3
    f.reorder(c, x, y).unroll(c)
    a = rng.integers(0, 255, size=(3, 6, 10), dtype=np.uint8)  # planar: a[c, y, x]
    inp.set(a)
    hwc = np.zeros((6, 10, 3), dtype=np.uint8)  # interleaved, as images are stored
    p = pj.Pipeline(f)
    assert p.realize(hwc.transpose(2, 0, 1)) is None
    np.testing.assert_array_equal(hwc, (a // 2 + 7).transpose(1, 2, 0))
    with pytest.raises(pj.RuntimeError, match="output buffer f has stride 1 in dimension 0, but its output_buffer"):
        p.realize(np.zeros((3, 6, 10), dtype=np.uint8))
    # set_stride(None), Halide's Expr(): either layout, through the tensors' own strides.
    g = pj.Func("g")
    g[x, y, c] = inp[x, y, c] // 2 + 7
    g.output_buffer().dim(0).set_stride(None)
    any_layout = pj.Pipeline(g)
    for out in (np.zeros((6, 10, 3), dtype=np.uint8).transpose(2, 0, 1), np.zeros((3, 6, 10), dtype=np.uint8)):
        assert any_layout.realize(out) is None
        np.testing.assert_array_equal(out, a // 2 + 7)


def test_trace_stores_print_each_store(capfd):
    x = pj.Var("x")
    f = pj.Func("traced")
    f[x] = x * 3
    f.trace_stores().trace_realizations()
    out = pj.Pipeline(f).realize([3])
    np.testing.assert_array_equal(out, [0, 3, 6])
    printed = capfd.readouterr().err
    assert "Produce traced(0, 3)\nStore traced.0(0) = 0\nStore traced.0(1) = 3\nStore traced.0(2) = 6\nEnd produce traced(0, 3)\n" in printed


def test_one_wrapper_for_several_consumers(rng):
    x, y = pj.Var("x"), pj.Var("y")
    inp = pj.ImageParam(pj.Int(32), 2, "inp")
    f, g, h = pj.Func("f"), pj.Func("g"), pj.Func("h")
    f[x, y] = inp[x, y] * 2
    g[x, y] = f[x, y] + f[x + 1, y]
    h[x, y] = g[x, y] - f[x, y]
    g.compute_root()
    shared = f.in_([g, h])
    shared.compute_root()
    assert shared.name() == "f_in_g_h" and inp.in_([g, h]).name() == "inp_in_g_h"
    a = rng.integers(-100, 100, size=(5, 9), dtype=np.int32)
    inp.set(a)
    out = pj.Pipeline(h).realize([8, 5])
    np.testing.assert_array_equal(out, a[:, 0:8] * 2 + a[:, 1:9] * 2 - a[:, 0:8] * 2)


def test_definitions_read_back():
    x = pj.Var("x")
    f = pj.Func("f")
    f[x] = x * 3 + 1
    g = pj.Func("g")
    g[x] = f.value() * 2
    assert not f.has_update_definition()
    assert list(pj.Pipeline(g).realize([5])) == [2 * (3 * i + 1) for i in range(5)]
    sums = pj.Func("sums")
    r = pj.RDom([(0, 4)], "r")
    sums[x] = 0
    sums[x] += x + r.x
    assert sums.has_update_definition()
    assert len(sums.update_args()) == 1 and len(sums.update_values()) == 1
    with pytest.raises(pj.CompileError, match="update 1 does not exist"):
        sums.update_value(1)
