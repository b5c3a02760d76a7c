#!/bin/sh
# Runs on a lent box with 2 GPUs (no Node there; node.xz and app.tar.xz carried in .device/ as in
# README.md): the real nsa-dbg, headless, on a real NCCL watchdog timeout (lanes/nccl-fr.yaml,
# test/device/fr_timeout.py under torchrun), then `analyze` of the same folder. The run folder comes
# back as $OUT/watchdog-live.tgz, the verdicts as $OUT/live.json and $OUT/analyze.json.
set -u
REPO=$PWD
. "$REPO/test/device/unpack-app.sh"
mkdir -p .nsa-dbg/presets && cp "$REPO/test/device/lanes/nccl-fr.yaml" .nsa-dbg/presets/
node --version
s=$(date +%s)
NSA_DBG_LOG="$OUT/engine.log" node bin/nsa-dbg run --headless --json --lane nccl-fr \
  --runs-dir /tmp/runs-wd -- python3 "$REPO/test/device/fr_timeout.py" > "$OUT/live.json" 2> "$OUT/live.err"
echo "== headless exit $? after $(( $(date +%s) - s )) s"
tail -c 3000 "$OUT/live.json"; echo; tail -20 "$OUT/live.err"
d=$(ls -d /tmp/runs-wd/*/ | head -1)
node bin/nsa-dbg analyze "$d" --json > "$OUT/analyze.json" 2>&1
echo "== analyze exit $?"
ls -la "$d"
tar czf "$OUT/watchdog-live.tgz" -C /tmp runs-wd
