"""Demo stand-in for nsa/model/llama_block_nsa.py: pre-norm block with NSA attention."""

from __future__ import annotations

from nsa.core.nsa_attention import NSAAttention
from nsa.model.simnn import Module, SimTensor


class RMSNorm(Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return x


class MLP(Module):
    def __init__(self, dim, hidden_mult=4):
        super().__init__()
        self.dim = dim
        self.hidden = dim * hidden_mult

    def forward(self, x):
        return x


class LlamaBlockNSA(Module):
    def __init__(self, dim, n_heads, n_kv_groups, d_k, d_v, l, d, l_sel, n_sel, w,
                 layer_idx=0, dtype="torch.bfloat16", seed=1337):
        super().__init__()
        self.norm1 = RMSNorm(dim)
        self.attn = NSAAttention(dim, n_heads, n_kv_groups, d_k, d_v, l, d, l_sel, n_sel, w,
                                 layer_idx=layer_idx, dtype=dtype, seed=seed)
        self.norm2 = RMSNorm(dim)
        self.mlp = MLP(dim)

    def forward(self, x, kv=None):
        xn = self.norm1(x)
        out, _kv = self.attn(xn, kv=kv, prefill=True)
        x = SimTensor(x.shape, x.finite and out.finite, out.dtype)
        x = self.mlp(self.norm2(x))
        return x
