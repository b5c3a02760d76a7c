"""Tiny stand-ins for torch.nn.Module and torch.Tensor (demo only, no torch).

``Module.__call__`` goes through ``_wrapped_call_impl`` and ``_call_impl`` like
torch does, so stack dumps have the same shape as the real trainer's.
"""

from __future__ import annotations


class SimTensor:
    """Shape plus a finiteness flag: all the demo needs to know about a tensor."""

    __slots__ = ("shape", "finite", "dtype")

    def __init__(self, shape, finite=True, dtype="torch.bfloat16"):
        self.shape = tuple(int(s) for s in shape)
        self.finite = bool(finite)
        self.dtype = dtype

    def size(self, dim=None):
        if dim is None:
            return "torch.Size([" + ", ".join(str(s) for s in self.shape) + "])"
        return self.shape[dim]

    def with_shape(self, shape):
        return SimTensor(shape, self.finite, self.dtype)

    def __repr__(self):
        return f"SimTensor(shape={self.shape}, finite={self.finite}, dtype={self.dtype})"


class Module:
    def __init__(self):
        self.training = True

    def forward(self, *args, **kwargs):  # pragma: no cover - abstract
        raise NotImplementedError

    def _call_impl(self, *args, **kwargs):
        forward_call = self.forward
        return forward_call(*args, **kwargs)

    def _wrapped_call_impl(self, *args, **kwargs):
        return self._call_impl(*args, **kwargs)

    __call__ = _wrapped_call_impl

    def train(self, mode=True):
        self.training = mode
        return self
