"""Demo stand-ins for nsa/core/attention_kernels.py (no torch, no GPU).

The functions burn a little CPU in small slices of Python bytecode so that a
SIGUSR1 stack dump taken while a step runs lands inside them, the way it lands in
the real kernels' Python wrappers on a GPU box.
"""

from __future__ import annotations

import os
import time

# Busy slice / idle slice while "kernels run": about half a core per trainer.
_SLICE_S = 0.003

_CUDA_ILLEGAL_ADDRESS = (
    "CUDA error: an illegal memory access was encountered\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, "
    "so the stacktrace below might be incorrect.\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
)


def _env_bool(name: str, default: str = "0") -> bool:
    # attention_kernels accepts "on" too (unlike the trainer and nsa_attention).
    return os.getenv(name, default).strip().lower() in ("1", "true", "yes", "on")


class SelectionRanges:
    """Selected [start, end) ranges per (batch, token, kv group, block).

    In the demo it only carries its shape and the wall-clock deadline of the
    compute that uses it.
    """

    __slots__ = ("shape", "deadline")

    def __init__(self, shape, deadline: float):
        self.shape = tuple(shape)
        self.deadline = float(deadline)


def grouped_selection_attention_packed(Q, K, V, ranges):
    """Packed selection attention: rows with equal selected length share one SDPA call."""
    B, S = Q.shape[0], Q.shape[1]
    G = ranges.shape[2] if len(ranges.shape) > 2 else 1
    acc = 0.0
    t = 0
    busy_until = time.monotonic() + _SLICE_S
    while True:
        # bucket rows (b, t, g) by their total selected length
        for i in range(64):
            acc = (acc * 1.0000001 + i + t * G) % 65521.0
        now = time.monotonic()
        if now >= ranges.deadline:
            break
        if now >= busy_until:
            time.sleep(_SLICE_S)  # waiting on the packed SDPA launches
            busy_until = time.monotonic() + _SLICE_S
        t = (t + 1) % (B * S)
    return Q.with_shape((B, S, Q.shape[2] if len(Q.shape) > 2 else 1))


def is_flash_available() -> bool:
    """Retries ``from flash_attn import ...`` on every call, scanning sys.path each time."""
    import sys

    hits = 0
    for _ in range(20):
        for p in sys.path:
            hits += p.endswith("flash_attn")
    return hits > 0


def select_topn_ranges(t: int, n_sel: int, S: int):
    """Top-n block selection for token t: a Python loop over candidate blocks."""
    best = []
    score = float(t)
    for blk in range(max(1, S // 8)):
        score = (score * 1.000003 + blk) % 9973.0
        if len(best) < n_sel:
            best.append((score, blk))
        else:
            best.sort()
            if score > best[0][0]:
                best[0] = (score, blk)
    return [(b * 8, b * 8 + 8) for _, b in best]


def sliding_window_attention_fa2(Q, K, V, w, min_len_for_fa2=16):
    """FA-2 varlen sliding-window attention.

    In the demo this is the FA-2 crash lane: the varlen launch reads an
    uninitialised cu_seqlens buffer and the CUDA error surfaces at the next sync.
    """
    B, S = Q.shape[0], Q.shape[1]
    acc = 0.0
    end = time.monotonic() + 0.01
    while time.monotonic() < end:
        # build cu_seqlens_q / cu_seqlens_k for every row's window
        for i in range(64):
            acc = (acc + i * w) % 65521.0
    cu_seqlens_q = None  # never filled in on this path
    if cu_seqlens_q is None or S >= min_len_for_fa2:
        raise RuntimeError(_CUDA_ILLEGAL_ADDRESS)
    return Q.with_shape((B, S, Q.shape[2] if len(Q.shape) > 2 else 1))
