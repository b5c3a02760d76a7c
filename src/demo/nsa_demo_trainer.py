#!/usr/bin/env python3
"""nsa-dbg's bundled demo trainer: a stdlib-only stand-in for nsa-vibe's
``scripts/train_showcase.py`` that speaks the same file/stdout/signal contract.

Usage: python3 -u nsa_demo_trainer.py --dataset synthetic --ddp 0 [--steps N] [--seq-len N]
       [--out-dir DIR] [--step-ms MS] [--precision bf16|fp16|fp32]

The training loop lives in scripts/train_showcase.py (next to this file) so that stack
dumps and tracebacks show the real trainer's file names; see its docstring for lanes.
"""

import os
import sys

sys.dont_write_bytecode = True
_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from scripts.train_showcase import main  # noqa: E402

if __name__ == "__main__":
    main()
