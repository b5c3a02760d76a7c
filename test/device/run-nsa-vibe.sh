#!/bin/sh
# Runs on a lent GPU box (no Node there): the real nsa-vibe trainer (scripts/train_showcase.py, its
# default sequential prefill, S=512, B=1) under the real nsa-dbg, headless, then `analyze` of the same
# run dir. Carried in .device/ (not in git): node.xz, app.tar.xz (built app + production deps),
# nsa-vibe.tar (`git archive HEAD nsa scripts configs`), pylib.tar (Debian's pure-Python omegaconf
# and antlr4). Output goes to $OUT. Usage: run-nsa-vibe.sh LANE STEPS [TAG]
set -u
LANE=${1:-baseline}; STEPS=${2:-6}; TAG=${3:-$LANE}
. test/device/nsa-vibe-env.sh
# lanes of this check (user lanes are read from ./.nsa-dbg/presets of the working dir)
mkdir -p /tmp/nv/.nsa-dbg/presets && cp "$REPO"/test/device/lanes/*.yaml /tmp/nv/.nsa-dbg/presets/
{ node --version; python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.get_device_name(0))'
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; } > "$OUT/env-$TAG.txt" 2>&1
cd /tmp/nv
start=$(date +%s)
NSA_DBG_LOG="$OUT/engine-$TAG.log" node /tmp/nsa-app/bin/nsa-dbg run --headless --json --lane "$LANE" \
  --steps "$STEPS" --runs-dir "/tmp/runs-$TAG" -- python3 -u scripts/train_showcase.py --dataset synthetic --ddp 0 \
  > "$OUT/$TAG.json" 2> "$OUT/$TAG.err"
echo "exit $? after $(( $(date +%s) - start )) s"
dir=$(ls -d /tmp/runs-$TAG/*/ | head -1)
node /tmp/nsa-app/bin/nsa-dbg analyze "$dir" --json > "$OUT/$TAG.analyze.json"; echo "analyze exit $?"
node /tmp/nsa-app/bin/nsa-dbg analyze "$dir" > "$OUT/$TAG.analyze.txt"
# the run's evidence in one file (what comes back is limited in count)
tar czf "$OUT/$TAG-run.tgz" -C "$dir" --exclude='*.pt' --exclude='tb' .
cat "$OUT/$TAG.analyze.txt"
python3 - "$OUT/$TAG.json" "$OUT/$TAG.analyze.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
print("headless:", a["verdict"], "go" if a.get("go") else "no-go", a.get("reasons"))
for k in ("verdict", "stall", "stepsReached", "suspects"):
    print(f"  same {k}: {a[k] == b[k]}")
print("  suspects:", json.dumps(a["suspects"])[:600])
print("  dumpRequests:", json.dumps(a["dumpRequests"])[:600])
print("  hotFrames:", json.dumps(a["hotFrames"][:5]))
PY
tail -5 "$OUT/engine-$TAG.log"
