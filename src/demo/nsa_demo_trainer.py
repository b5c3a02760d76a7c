#!/usr/bin/env python3
"""nsa-dbg's bundled demo trainer: a stdlib-only stand-in for nsa-vibe's
``scripts/train_showcase.py`` that speaks the same file/stdout/signal contract.

Usage: python3 -u nsa_demo_trainer.py --dataset synthetic --ddp 0 [--steps N] [--seq-len N]
       [--out-dir DIR] [--step-ms MS] [--precision bf16|fp16|fp32] [--ranks N [--nodes M]]

With --ranks N (N > 1) it runs N rank processes instead (scripts/train_ranks.py), with --nodes M
spread over M simulated nodes.

The training loop lives in scripts/train_showcase.py (next to this file) so that stack
dumps and tracebacks show the real trainer's file names; see its docstring for lanes.
"""

import os
import sys

sys.dont_write_bytecode = True
_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


def _ranks_args(argv):
    """--ranks N or NSA_DEMO_RANKS=N (N > 1): the many-rank mode (scripts/train_ranks.py)"""
    vals = {"--ranks": os.environ.get("NSA_DEMO_RANKS", "1"), "--steps": "20", "--step-ms": "300",
            "--out-dir": "artifacts/demo", "--nodes": "1"}
    for i, a in enumerate(argv[:-1]):
        if a in vals:
            vals[a] = argv[i + 1]
    n = int(vals["--ranks"])
    if n <= 1:
        return None
    return n, int(vals["--steps"]), float(vals["--step-ms"]), vals["--out-dir"], int(vals["--nodes"])


if __name__ == "__main__":
    many = _ranks_args(sys.argv[1:])
    if many is None:
        from scripts.train_showcase import main

        for flag in ("--ranks", "--nodes"):  # one rank: the single-rank trainer has no such flags
            if flag in sys.argv[:-1]:
                i = sys.argv.index(flag)
                del sys.argv[i:i + 2]
        main()
    else:
        from scripts.train_ranks import main

        main(sys.argv[1:], *many)
