"""Demo stand-in for nsa/core/nsa_attention.py (no torch, no GPU).

Keeps the real module's routing shape: ``NSAAttention.forward`` sends prefill to
``_forward_prefill_sequential`` (the default) or ``_forward_prefill_batched``
(``NSA_PREFILL_BATCHED=1``), reading its env switches once at construction.

Deterministic failure modes reproduced here (see the docstring of
scripts/train_showcase.py):
  * sequential prefill spins forever on its 6th call (the historical "step 5 hang"),
  * ``NSA_USE_FA2`` routes the sliding branch to an FA-2 wrapper that raises a CUDA
    illegal-memory-access error,
  * fp16 activations overflow on the 2nd call (non-finite output),
  * end-of-step aux statistics (``_collect_aux_stats``) never finish,
  * ``NSA_DEMO_SPIN_CALL=N``: the batched prefill spins forever on one line from its
    N-th call (a true hang, CPU-busy),
  * ``NSA_DEMO_SLOW_STEP_S`` (with ``NSA_DEMO_SLOW_FIRST_S``): the sequential prefill is
    slow but alive, the real trainer's pace on an H100: CPU-bound Python whose frames
    move between ``is_flash_available`` and ``select_topn_ranges``, never hanging.

Every endless loop here sits on one source line, as a real spin does, so stack samples
of a stuck rank agree on the frame *and* the line.
"""

from __future__ import annotations

import math
import os
import random
import struct
import time

from nsa.core.attention_kernels import (
    SelectionRanges,
    grouped_selection_attention_packed,
    is_flash_available,
    select_topn_ranges,
    sliding_window_attention_fa2,
)
from nsa.model.simnn import Module, SimTensor

# Same slice as attention_kernels: half busy, half idle while a step runs.
_SLICE_S = 0.003
# Sequential prefill never returns from this call (1-based).
_SEQ_HANG_CALL = 6
# fp16: activations overflow from this call on (1-based).
_FP16_OVERFLOW_CALL = 2


def parse_bool(v) -> bool:
    # nsa_attention's parser: "on" is *not* truthy here.
    return str(v).strip().lower() in ("1", "true", "yes")


def _f32(x: float) -> float:
    """Round through float32, like a value read back from a GPU tensor with .item()."""
    return struct.unpack("f", struct.pack("f", float(x)))[0]


class _KV:
    """Per-branch K/V caches (shapes only)."""

    def __init__(self, B, S, G, d_k, d_v):
        self.K_sel = SimTensor((B, G, S, d_k))
        self.V_sel = SimTensor((B, G, S, d_v))
        self.K_win = SimTensor((B, G, S, d_k))
        self.V_win = SimTensor((B, G, S, d_v))
        self.K_cmp = SimTensor((B, G, max(1, S // 8), d_k))
        self.V_cmp = SimTensor((B, G, max(1, S // 8), d_v))


class NSAAttention(Module):
    def __init__(self, dim, n_heads, n_kv_groups, d_k, d_v, l=16, d=8, l_sel=32, n_sel=8, w=256,
                 layer_idx=0, dtype="torch.bfloat16", seed=1337):
        super().__init__()
        assert n_heads % n_kv_groups == 0, "heads must be divisible by kv groups"
        if l % d != 0 or l_sel % d != 0:
            raise ValueError("M0 requires d|l and d|l_sel; set valid block sizes/stride.")
        self.dim = dim
        self.n_heads = n_heads
        self.n_kv_groups = n_kv_groups
        self.d_k = d_k
        self.d_v = d_v
        self.l, self.d, self.l_sel, self.n_sel, self.w = l, d, l_sel, n_sel, w
        self.layer_idx = layer_idx
        self.dtype = dtype
        self._rng = random.Random(seed * 1009 + layer_idx)
        self._prefill_calls = 0
        self._budget_s = 0.0
        self._last_shape = (1, 0)
        self.fallback_counters = {
            "selection_triton_fails": 0,
            "selection_cuda_fails": 0,
            "selection_pack_fails": 0,
            "selection_mask_fails": 0,
            "compressed_fa2_fails": 0,
            "sliding_fa2_fails": 0,
            "total_fallbacks": 0,
        }
        self.last_gate_stats = None
        self.last_sel_stats = None
        self._cache_env_vars()

    # -- env ---------------------------------------------------------------
    def _cache_env_vars(self):
        env = os.environ
        self.prefill_batched = parse_bool(env.get("NSA_PREFILL_BATCHED", "0"))
        self.force_parity = parse_bool(env.get("NSA_FORCE_PARITY", "0"))
        self.use_sel_pack = parse_bool(env.get("NSA_USE_SEL_PACK", "1"))
        self.use_sel_mask = parse_bool(env.get("NSA_USE_SEL_MASK", "0"))
        self.force_sel_mask = parse_bool(env.get("NSA_FORCE_SEL_MASK", "0"))
        # read as the real model reads them, and change nothing here: the noise a bisection
        # has to see through (NVTX ranges; v2 index->range conversion, on by default)
        self.nvtx = parse_bool(env.get("NSA_NVTX", "0"))
        self.sel_ranges_v2 = parse_bool(env.get("NSA_SEL_RANGES_V2", "1"))
        # FA-2 routing: unset everywhere -> off; NSA_USE_FA2 set -> master switch;
        # only a branch flag set -> master falls back to the model default (on).
        master = env.get("NSA_USE_FA2")
        win = env.get("NSA_USE_FA2_WIN")
        cmp_ = env.get("NSA_USE_FA2_CMP")
        if master is None and win is None and cmp_ is None:
            fa2_all = False
            self.fa2_win = self.fa2_cmp = False
        elif master is not None:
            # routing tests (fa2_all or fa2_branch): master=1 turns both branches on,
            # master=0 turns everything off
            fa2_all = parse_bool(master)
            self.fa2_win = self.fa2_cmp = fa2_all
        else:
            fa2_all = False
            self.fa2_win = win is not None and parse_bool(win)
            self.fa2_cmp = cmp_ is not None and parse_bool(cmp_)
        self.fa2_all = fa2_all
        self.fa2_min_len_win = int(env.get("NSA_FA2_MIN_LEN_WIN", "16") or 16)
        self.fa2_min_len_cmp = int(env.get("NSA_FA2_MIN_LEN_CMP", "16") or 16)
        # demo-only knobs (see the module docstring)
        self.spin_call = int(env.get("NSA_DEMO_SPIN_CALL", "0") or 0)
        slow_step = env.get("NSA_DEMO_SLOW_STEP_S")
        self.slow_step_s = float(slow_step) if slow_step else None
        self.slow_first_s = float(env.get("NSA_DEMO_SLOW_FIRST_S", "40") or 40)
        self.n_layers = int(env.get("NSA_DEMO_LAYERS", "6") or 6)

    # -- demo clock ----------------------------------------------------------
    def set_step_budget(self, seconds: float):
        """Wall time one prefill call should take (the demo's stand-in for GPU work)."""
        self._budget_s = max(0.0, float(seconds))

    # -- forward -------------------------------------------------------------
    def forward(self, x, kv=None, *, prefill=False):
        self._prefill_calls += 1
        B, S = x.shape[0], x.shape[1]
        self._last_shape = (B, S)
        if kv is None:
            kv = _KV(B, S, self.n_kv_groups, self.d_k, self.d_v)
        if prefill:
            if self.prefill_batched:
                return self._forward_prefill_batched(x, kv)
            return self._forward_prefill_sequential(x, kv)
        return self._forward_decode(x, kv)

    def _forward_prefill_sequential(self, x, kv):
        """Per-token prefill: for t in range(S) run cmp / sel / win for token t."""
        B, S = x.shape[0], x.shape[1]
        if self.slow_step_s is not None:
            return self._forward_prefill_sequential_slow(x, kv)
        start = time.monotonic()
        deadline = start + self._budget_s
        if self.fa2_win and S >= self.fa2_min_len_win:
            O_win = sliding_window_attention_fa2(x, kv.K_win, kv.V_win, self.w, self.fa2_min_len_win)
        # Simulated defect: on this call the selection ranges for one token never
        # settle and the per-token loop stops advancing (pure-Python busy spin).
        stuck = self._prefill_calls >= _SEQ_HANG_CALL
        acc = 0.0
        t = 0
        busy_until = start + _SLICE_S
        while stuck: acc = (acc * 1.0000001 + t) % 65521.0  # noqa: E701  (one line: the spin)
        while True:
            for i in range(64):
                acc = (acc * 1.0000001 + i + t) % 65521.0
            now = time.monotonic()
            if now >= deadline:
                break
            if now >= busy_until:
                time.sleep(_SLICE_S)
                busy_until = time.monotonic() + _SLICE_S
            t = (t + 1) % S
        self._update_gate_stats(B * S)
        return self._finish(x), kv

    def _forward_prefill_sequential_slow(self, x, kv):
        """Slow but alive: per-token Python work at 100 % of a core, as on the real H100."""
        B, S = x.shape[0], x.shape[1]
        per_step = self.slow_first_s if self._prefill_calls == 1 else self.slow_step_s
        deadline = time.monotonic() + per_step / max(1, self.n_layers)
        t = 0
        while time.monotonic() < deadline:
            # nsa-vibe retries the flash-attn import on every call, then picks each token's blocks
            if is_flash_available():
                break
            select_topn_ranges(t, self.n_sel, S)
            t = (t + 1) % S
        self._update_gate_stats(B * S)
        return self._finish(x), kv

    def _forward_prefill_batched(self, x, kv):
        """Vectorised prefill over all tokens at once."""
        B, S = x.shape[0], x.shape[1]
        acc = 0.0
        spin = self.spin_call > 0 and self._prefill_calls >= self.spin_call
        while spin: acc = (acc * 1.0000001 + S) % 65521.0  # noqa: E701  (one line: the spin)
        start = time.monotonic()
        # projections + rope, cmp branch (masked SDPA): a small share of the step
        proj_end = start + 0.15 * self._budget_s
        acc = 0.0
        while time.monotonic() < proj_end:
            for i in range(64):
                acc = (acc + i) % 65521.0
        if self.fa2_win and S >= self.fa2_min_len_win:
            O_win = sliding_window_attention_fa2(x, kv.K_win, kv.V_win, self.w, self.fa2_min_len_win)
        Q = SimTensor((B, S, self.n_heads, self.d_k))
        sel_ranges_all = SelectionRanges((B, S, self.n_kv_groups, self.n_sel, 2), start + self._budget_s)
        O_sel = grouped_selection_attention_packed(Q, kv.K_sel, kv.V_sel, sel_ranges_all)
        self._update_gate_stats(B * S)
        return self._finish(x), kv

    def _forward_decode(self, x, kv):
        return self._finish(x), kv

    def _finish(self, x):
        finite = x.finite
        if self.dtype == "torch.float16" and self._prefill_calls >= _FP16_OVERFLOW_CALL:
            finite = False  # gate logits overflow in half precision
        return SimTensor(x.shape, finite, self.dtype)

    # -- stats ---------------------------------------------------------------
    def _update_gate_stats(self, rows):
        r = self._rng
        shares = [0.3290 + r.gauss(0, 0.0004), 0.3322 + r.gauss(0, 0.0004)]
        shares.append(1.0 - shares[0] - shares[1])
        ent_mean = math.log(3.0) - 0.00013 + r.gauss(0, 0.000002)
        self.last_gate_stats = {
            "entropy_mean": _f32(ent_mean),
            "entropy_min": _f32(ent_mean - 0.00049 + r.gauss(0, 0.00003)),
            "max_gate": _f32(0.3493 + r.gauss(0, 0.0006)),
            "collapse_frac": 0.0,
            "branch_shares": [_f32(s) for s in shares],
        }
        k_max = self.n_sel * self.l_sel
        self.last_sel_stats = {
            "k_mean": 169.0,
            "k_max": k_max,
            "rows": rows * self.n_kv_groups,
            "pct_at_max": 0.017578125,
        }

    def get_gate_stats(self):
        return self.last_gate_stats

    def get_fallback_counters(self):
        return dict(self.fallback_counters)

    def get_selection_stats(self):
        return self.last_sel_stats

    def _collect_aux_stats(self, stall=True):
        """End-of-step aux statistics: per-row selected-k histogram for k_stats.csv.

        Simulated defect: with ``stall`` the reduction over rows never terminates
        (pure-Python busy spin), so the step never reaches its step_end heartbeat.
        """
        B, S = self._last_shape
        rows = max(1, B * S * self.n_kv_groups)
        hist = [0] * 8
        row = 0
        while stall: hist[row & 7] += 1  # noqa: E701  (one line: the spin)
        while row < rows:
            for i in range(64):
                hist[(row + i) & 7] += 1
            if not stall:
                row += 64
        return dict(self.last_sel_stats or {})
