"""One rank under torchrun (test_torch.py starts two): each realizes on the GPU of its local rank,
chosen by ptxjit from LOCAL_RANK for host arrays, and no rank makes a context on the other GPU."""

import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_torch import gpu_blur, primary_context_active  # noqa: E402

rank = int(os.environ["LOCAL_RANK"])
inp, p = gpu_blur()
a = np.random.default_rng(rank).random((34, 66), dtype=np.float32)
inp.set(a)
out = p.realize([64, 32])  # host arrays: the device comes from LOCAL_RANK
bx = a[:, :-2] + a[:, 1:-1] + a[:, 2:]
reference = (bx[:-2] + bx[1:-1] + bx[2:]) / 9
np.testing.assert_allclose(out, reference, rtol=1e-5, atol=1e-6)

active = [primary_context_active(d) for d in range(torch.cuda.device_count())]
assert active[rank] and sum(active) == 1, (rank, active)
t = torch.rand((34, 66), device=f"cuda:{rank}")
inp.set(t)
out = p.realize([64, 32], device=t.device)
assert out.device == t.device
active = [primary_context_active(d) for d in range(torch.cuda.device_count())]
assert sum(active) == 1, (rank, active)
print("rank ok", rank, flush=True)
