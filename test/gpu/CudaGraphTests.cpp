// Realizes as CUDA graphs (the cuda_graphs target feature): results equal the stream's, graphs
// replayed with new pointers and scalars are updated and never instantiated again, shapes that
// change build new ones, and the context discipline of the stream path holds.

#include "GPUTestUtil.h"

#include <cmath>

using namespace ptxjit;
using namespace ptxjit::test;

namespace {

const Target GraphTarget("host-cuda-cuda_graphs");

// Four kernels, three intermediates from the graph's memory, a zeroed reduction and a scalar.
struct Chain {
  ImageParam in{Float(32), 2, "in"};
  Param<float> scale{"scale"};
  Var x{"x"}, y{"y"}, xi{"xi"}, yi{"yi"};
  Func clamped{"clamped"}, f{"f"}, g{"g"}, h{"h"}, out{"out"};
  RDom r{0, 4, "r"};
  Chain() {
    clamped = BoundaryConditions::repeat_edge(in);
    f(x, y) = clamped(x, y) * scale + 1.0f;
    g(x, y) = f(x - 1, y) + f(x + 1, y) - f(x, y - 1);
    h(x, y) = 0.0f;
    h(x, y) += g(x, y) * cast<float>(r + 1);
    out(x, y) = h(x, y) - f(x, y);
    for (Func *stage : {&f, &g, &h})
      stage->compute_root().gpu_tile(x, y, xi, yi, 32, 8);
    h.update().gpu_tile(x, y, xi, yi, 32, 8);
    out.gpu_tile(x, y, xi, yi, 32, 8);
  }
  static float reference(const Buffer<float> &input, float s, int i, int j) {
    auto at = [&](int a, int b) {
      a = std::clamp(a, input.min(0), input.min(0) + input.extent(0) - 1);
      b = std::clamp(b, input.min(1), input.min(1) + input.extent(1) - 1);
      return input(a, b) * s + 1.0f;
    };
    float gv = at(i - 1, j) + at(i + 1, j) - at(i, j - 1);
    return gv * 10.0f - at(i, j);
  }
};

CudaGraphStatistics since(const CudaGraphStatistics &before) {
  CudaGraphStatistics now = JIT::cuda_graph_statistics();
  now.built -= before.built;
  now.instantiated -= before.instantiated;
  now.replayed -= before.replayed;
  now.updated_nodes -= before.updated_nodes;
  now.stream_fallbacks -= before.stream_fallbacks;
  return now;
}

// A Buffer whose device copy is made (and kept) now, on the default handlers' context.
Buffer<float> onDevice(Buffer<float> b) {
  copy_to_device(b);
  return b;
}

} // namespace

TEST_CASE("CUDA graphs (child process)", "[.]") {
  PTXJIT_REQUIRE_GPU();
  // Catch runs the test once per section, in this order, in one process: the sections that must
  // see no primary context come first, before the others use the built-in handlers.
  const bool primaryBefore = anyPrimaryContextActive();
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  Chain chain;
  Pipeline graphs = onGPU(chain.out, GraphTarget);
  CHECK(anyPrimaryContextActive() == primaryBefore); // compiling for graphs touches no GPU

  SECTION("the user's context and stream, the caller's current context restored, no primary context") {
    OwnContext own(0), other(0);
    CountingContext c;
    c.Context = own.Context;
    c.Stream = own.Stream;
    Buffer<float> input(120, 50);
    fill_random(input, seed);
    Buffer<float> in = input;
    copy_to_device(in, &c);
    chain.in.set(in);
    chain.scale.set(-1.5f);
    CU_CHECK(cuCtxPushCurrent(other.Context));
    for (int i = 0; i < 3; ++i) {
      Buffer<float> out(120, 50);
      copy_to_device(out, &c);
      int acquires = c.Acquires, streams = c.StreamCalls, mallocs = c.Mallocs;
      graphs.realize(&c, out);
      CHECK(c.Acquires == acquires + 1);
      CHECK(c.StreamCalls == streams + 1);
      CHECK(c.Mallocs == mallocs); // intermediates come from the graph's allocation nodes
      CUcontext current = nullptr;
      CU_CHECK(cuCtxGetCurrent(&current));
      CHECK(current == other.Context);
      copy_to_host(out, &c);
      check_against(out, [&](const std::vector<int> &q) { return Chain::reference(input, -1.5f, q[0], q[1]); }, 1e-4);
    }
    CUcontext popped;
    CU_CHECK(cuCtxPopCurrent(&popped));
    CHECK(c.Acquires == c.Releases);
    CHECK_FALSE(anyPrimaryContextActive());
    chain.in.set(Buffer<float>(1, 1));
  }
  SECTION("errors restore the current context and keep acquire and release paired") {
    OwnContext own(0), other(0);
    CountingContext c;
    c.Context = own.Context;
    c.Stream = own.Stream;
    ImageParam in(Float(32), 2, "in");
    Param<int> reach("reach");
    Var x("x"), y("y"), xi("xi"), yi("yi"), xio("xio"), xii("xii");
    Func g("g"), f("f");
    g(x, y) = in(x, y) * 2.0f;
    f(x, y) = g(x, y) + g(x + reach, y);
    f.gpu_tile(x, y, xi, yi, 64, 4);
    g.compute_at(f, x).split(x, xio, xii, 64).gpu_threads(xii, y);
    Pipeline p = onGPU(f, GraphTarget);
    Buffer<float> input(150 + 15000, 9);
    fill_random(input, seed);
    in.set(input);
    reach.set(15000); // 241 KB of shared memory a block: more than any device allows
    CU_CHECK(cuCtxPushCurrent(other.Context));
    Buffer<float> out(150, 9);
    CHECK_THROWS_WITH(p.realize(&c, out), Catch::Contains("bytes of shared memory per block; this device allows at most"));
    CUcontext current = nullptr;
    CU_CHECK(cuCtxGetCurrent(&current));
    CHECK(current == other.Context);
    CUcontext popped;
    CU_CHECK(cuCtxPopCurrent(&popped));
    CHECK(c.Acquires == c.Releases);
    CHECK(c.Mallocs == c.Frees); // the staged buffers went back
    CHECK_FALSE(anyPrimaryContextActive());
  }
  SECTION("results equal the stream's on random data") {
    Chain streamChain;
    Pipeline stream = onGPU(streamChain.out);
    for (auto [w, hgt] : {std::pair{200, 100}, std::pair{33, 7}}) {
      INFO(w << "x" << hgt);
      Buffer<float> input(w, hgt);
      fill_random(input, seed + w);
      chain.in.set(input);
      streamChain.in.set(input);
      chain.scale.set(0.75f);
      streamChain.scale.set(0.75f);
      CudaGraphStatistics before = JIT::cuda_graph_statistics();
      Buffer<float> fromGraph(w, hgt), fromStream(w, hgt);
      fromGraph.fill(NAN);
      graphs.realize(fromGraph);
      stream.realize(fromStream);
      copy_to_host(fromGraph);
      copy_to_host(fromStream);
      CudaGraphStatistics s = since(before);
      CHECK(s.built == 1);
      CHECK(s.instantiated == 1);
      CHECK(s.stream_fallbacks == 0);
      fromGraph.for_each_element([&](const std::vector<int> &q) {
        INFO("at " << q[0] << "," << q[1]);
        REQUIRE(fromGraph(q[0], q[1]) == fromStream(q[0], q[1])); // the same kernels: bit for bit
      });
      check_against(fromGraph, [&](const std::vector<int> &q) { return Chain::reference(input, 0.75f, q[0], q[1]); },
                    1e-4);
    }
  }
  SECTION("1000 realizes with new pointers and scalars update one graph and never instantiate again") {
    const int w = 96, hgt = 40;
    std::vector<Buffer<float>> inputs, outputs;
    for (int i = 0; i < 3; ++i) {
      Buffer<float> input(w, hgt);
      fill_random(input, seed + 17 * i);
      inputs.push_back(onDevice(input));
      outputs.push_back(onDevice(Buffer<float>(w, hgt)));
    }
    chain.in.set(inputs[0]);
    chain.scale.set(1.0f);
    graphs.realize(outputs[0]); // builds
    CudaGraphStatistics before = JIT::cuda_graph_statistics();
    for (int i = 1; i <= 1000; ++i) {
      chain.in.set(inputs[(i / 3) % 3]);
      chain.scale.set(0.5f + float(i % 5));
      graphs.realize(outputs[i % 3]);
    }
    CudaGraphStatistics s = since(before);
    CHECK(s.built == 0);
    CHECK(s.instantiated == 0);
    CHECK(s.replayed == 1000);
    CHECK(s.updated_nodes > 0);
    CHECK(s.stream_fallbacks == 0);
    // The last three realizes wrote every output: check each against its input and scale.
    for (int i = 998; i <= 1000; ++i) {
      INFO("realize " << i);
      Buffer<float> &o = outputs[i % 3];
      copy_to_host(o);
      check_against(o, [&](const std::vector<int> &q) {
        return Chain::reference(inputs[(i / 3) % 3], 0.5f + float(i % 5), q[0], q[1]);
      }, 1e-4);
    }
  }
  SECTION("a shape that changes builds a new graph; the old shape replays its own") {
    chain.scale.set(2.0f);
    auto realizeOf = [&](int w, int hgt) {
      Buffer<float> input(w, hgt);
      fill_random(input, seed + w * hgt);
      chain.in.set(input);
      Buffer<float> out(w, hgt);
      graphs.realize(out);
      copy_to_host(out);
      check_against(out, [&](const std::vector<int> &q) { return Chain::reference(input, 2.0f, q[0], q[1]); }, 1e-4);
    };
    CudaGraphStatistics before = JIT::cuda_graph_statistics();
    realizeOf(64, 64);
    realizeOf(64, 64);
    CHECK(since(before).built == 1);
    realizeOf(128, 31);
    CHECK(since(before).built == 2);
    realizeOf(64, 64);
    realizeOf(128, 31);
    CudaGraphStatistics s = since(before);
    CHECK(s.built == 2);
    CHECK(s.instantiated == 2);
    CHECK(s.replayed == 3);
  }
  SECTION("a scalar that changes a kernel's shared memory rebuilds the graph, with correct results") {
    ImageParam in(Float(32), 2, "in");
    Param<int> reach("reach");
    Var x("x"), y("y"), xi("xi"), yi("yi"), xio("xio"), xii("xii");
    Func g("g"), f("f");
    g(x, y) = in(x, y) * 2.0f - 1.0f;
    f(x, y) = g(x, y) + g(x + reach, y);
    f.gpu_tile(x, y, xi, yi, 64, 4);
    g.compute_at(f, x).split(x, xio, xii, 64).gpu_threads(xii, y);
    Pipeline p = onGPU(f, GraphTarget);
    Buffer<float> input(150 + 40, 9);
    fill_random(input, seed);
    in.set(input);
    CudaGraphStatistics before = JIT::cuda_graph_statistics();
    for (int r : {3, 3, 40, 3}) {
      INFO("reach " << r);
      reach.set(r);
      Buffer<float> out(150, 9);
      p.realize(out);
      copy_to_host(out);
      check_against(out, [&](const std::vector<int> &c) {
        return (input(c[0], c[1]) * 2.0f - 1.0f) + (input(c[0] + r, c[1]) * 2.0f - 1.0f);
      });
    }
    CudaGraphStatistics s = since(before);
    CHECK(s.built == 3); // reach 3, 40, and 3 again (the graph of 3 was replaced by 40's)
    CHECK(s.replayed == 1);
  }
  SECTION("what a graph cannot hold runs on the stream: host stages between kernels, parallel launches") {
    Buffer<float> input(70, 30);
    fill_random(input, seed);
    ImageParam in(Float(32), 2, "in");
    in.set(input);
    Var x("x"), y("y"), xi("xi"), yi("yi"), yo("yo");
    Func a("a"), onHost("on_host"), b("b");
    a(x, y) = in(x, y) + 1.0f;
    onHost(x, y) = a(x, y) * 3.0f; // no GPU schedule: the host reads a's device result
    b(x, y) = onHost(x, y) - in(x, y);
    a.compute_root().gpu_tile(x, y, xi, yi, 16, 8);
    onHost.compute_root();
    b.gpu_tile(x, y, xi, yi, 16, 8);
    Pipeline p = onGPU(b, GraphTarget);
    CudaGraphStatistics before = JIT::cuda_graph_statistics();
    for (int i = 0; i < 2; ++i) {
      Buffer<float> out(70, 30);
      p.realize(out);
      copy_to_host(out);
      check_against(out, [&](const std::vector<int> &q) {
        return (input(q[0], q[1]) + 1.0f) * 3.0f - input(q[0], q[1]);
      });
    }
    CHECK(since(before).stream_fallbacks == 2);

    Func band("band");
    band(x, y) = in(x, y) * 2.0f;
    band.split(y, yo, y, 8).parallel(yo).gpu_tile(x, y, xi, yi, 16, 8);
    Pipeline parallel = onGPU(band, GraphTarget);
    for (int i = 0; i < 3; ++i) {
      Buffer<float> out(70, 30);
      out.fill(NAN);
      parallel.realize(out);
      copy_to_host(out);
      check_against(out, [&](const std::vector<int> &q) { return input(q[0], q[1]) * 2.0f; });
    }
  }
  SECTION("fills are kernels; whether this driver still refuses a memset node on pool memory") {
    // The pipeline's zeroing of h runs as a kernel node (the graph holds only kernel and memory
    // nodes, by construction). This records what cuGraphAddMemsetNode does with memory from a
    // stream-ordered pool (NVIDIA bug 4151197): it must either fail with CUDA_ERROR_INVALID_VALUE
    // or set the memory.
    const cu::DriverApi &api = cu::driver();
    CUdevice device;
    CU_CHECK(cuDeviceGet(&device, 0));
    CUcontext context = nullptr;
    CU_CHECK(cuDevicePrimaryCtxRetain(&context, device));
    CU_CHECK(cuCtxPushCurrent(context));
    CUstream stream = nullptr;
    CU_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    const size_t count = 1 << 16;
    CUdeviceptr pointer = 0;
    CU_CHECK(cuMemAllocAsync(&pointer, count * 4, stream));
    CUgraph graph = nullptr;
    CU_CHECK(cuGraphCreate(&graph, 0));
    CUDA_MEMSET_NODE_PARAMS memset{};
    memset.dst = pointer;
    memset.elementSize = 4;
    memset.width = count;
    memset.height = 1;
    memset.pitch = count * 4;
    memset.value = 0x3f800000u; // 1.0f
    CUgraphNode node = nullptr;
    CUresult added = api.cuGraphAddMemsetNode(&node, graph, nullptr, 0, &memset, context);
    WARN("cuGraphAddMemsetNode on stream-ordered pool memory: " << cu::describe(added));
    if (added == CUDA_SUCCESS) {
      CUgraphExec exec = nullptr;
      CU_CHECK(cuGraphInstantiateWithFlags(&exec, graph, 0));
      CU_CHECK(cuGraphLaunch(exec, stream));
      std::vector<float> host(count, 0.0f);
      CU_CHECK(cuMemcpyDtoHAsync(host.data(), pointer, count * 4, stream));
      CU_CHECK(cuStreamSynchronize(stream));
      CHECK(std::all_of(host.begin(), host.end(), [](float v) { return v == 1.0f; }));
      api.cuGraphExecDestroy(exec);
    } else {
      CHECK(added == CUDA_ERROR_INVALID_VALUE);
    }
    api.cuGraphDestroy(graph);
    CU_CHECK(cuMemFreeAsync(pointer, stream));
    CU_CHECK(cuStreamSynchronize(stream));
    api.cuStreamDestroy(stream);
    CUcontext popped;
    CU_CHECK(cuCtxPopCurrent(&popped));
    api.cuDevicePrimaryCtxRelease(device);
  }
}

TEST_CASE("CUDA graphs: replayed and updated, on the user's context, results equal the stream's", "[gpu]") {
  PTXJIT_REQUIRE_GPU();
  run_in_child_process("CUDA graphs (child process)");
}
