#!/bin/sh
# Issue 21 on 2 × H200 over NCCL, part A (runs 1, 2, 4) plus the stock fp16 config's own out_dir.
# Carried in .device/ (see README.md); output under $OUT.
set -u
. test/device/nccl-common.sh
{ date -u; node --version; python3 -c 'import torch; print("torch", torch.__version__, [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())])'; } > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
cd /tmp/nv
export CONFIG=configs/dbg_nccl.yaml
one() { # tag lane steps -- command...
  tag=$1 lane=$2 steps=$3; shift 4; rm -rf artifacts/dbg_nccl; s=$(date +%s)
  NSA_DBG_LOG="$OUT/$tag.engine.log" $NSA run --headless --json --lane "$lane" ${steps:+--steps $steps} \
    --runs-dir /tmp/runs-$tag -- "$@" > "$OUT/$tag.json" 2> "$OUT/$tag.err"
  echo "== $tag: exit $? after $(( $(date +%s) - s )) s"; summarize "$tag"
}
echo "== run 1: ddp-static-graph (static_graph, find_unused off), 25 steps"
one 1-pass ddp-static-graph 25 -- $VIBE
echo "== run 2: ddp-nccl (default DDP flags), 6 steps"
one 2-unused ddp-nccl 6 -- $VIBE
echo "== run 4: a collective timeout with the Flight Recorder"
one 4-fr nccl-fr "" -- python3 -u "$REPO/test/device/fr_timeout.py"
ls -la "$(newest_run /tmp/runs-4-fr)"; head -40 "$(newest_run /tmp/runs-4-fr)/fr_trace.txt"
echo "== fp16 stock config: its own out_dir (artifacts/3090_smoke), log_every 20, 3 steps"
rm -rf artifacts/3090_smoke
one fp16 fp16 3 -- $VIBE --ddp 0
