#!/bin/sh
# Runs on a lent box with 2 GPUs (no Node there; node.xz and app.tar.xz carried in .device/ as in
# README.md): the real nsa-dbg, headless, on two runs that end themselves, under the last-words
# tests' lane (test/helpers/last-words.ts) with torchrun typed in the command:
#   nccl-crash    2 ranks over NCCL, rank 1 raises at step 3 while rank 0 waits in CUDA for the
#                 all_reduce; torchrun stops rank 0 (the teardown snapshot asks nvidia-smi too)
#   gloo-timeout  3 ranks over gloo on CPU with a 3 s collective timeout, rank 1 20 s in
#                 save_checkpoint: does a current torch's gloo raise or abort on its timeout?
# Verdicts as $OUT/<tag>.json, engine logs, the run folders in $OUT/runs.tgz.
set -u
REPO=$PWD
. "$REPO/test/device/unpack-app.sh"
export NCCL_NVLS_ENABLE=0
mkdir -p .nsa-dbg/presets
cat > .nsa-dbg/presets/lw.yaml <<'LANE'
name: lw
description: last words
stepsFlag: ""
detector: { floorS: 10, spinConfirmS: 4, maxStepS: 60 }
stop: { halt: false, sigintWaitS: 5 }
acceptance: { finiteLoss: true, noStall: true }
LANE
TR="python3 -m torch.distributed.run --tee 3"
one() { # tag, then the command
  tag=$1; shift; s=$(date +%s)
  NSA_DBG_LOG="$OUT/$tag.engine.log" node bin/nsa-dbg run --headless --json --lane lw --runs-dir /tmp/runs/$tag -- "$@" \
    > "$OUT/$tag.json" 2> "$OUT/$tag.err"
  echo "== $tag: exit $? after $(( $(date +%s) - s )) s"
  tail -1 "$OUT/$tag.json" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["verdict"], "|", d["summary"]); print("teardown", json.dumps(d.get("teardown"))[:1500]); print("lastWords", json.dumps(d.get("lastWords"))[:1500])'
  tail -5 "$OUT/$tag.err"
}
one nccl-crash $TR --nproc_per_node 2 "$REPO/test/fixtures/last-words/h100x2-nccl/lw_nccl.py.txt"
one gloo-timeout $TR --nproc_per_node 3 "$REPO/test/fixtures/trainers/last_words.py" timeout
for d in /tmp/runs/*/*/; do rm -rf "$d/.nsa-dbg-py"; done
tar czf "$OUT/runs.tgz" -C /tmp runs
