# Sourced by check-nccl-*.sh (run from the repo root on the lent 2-GPU box): the nsa-vibe setup of
# nsa-vibe-env.sh, this check's lanes, a small DDP config whose out_dir nsa-dbg must find itself
# (S=512, global batch 2, log_every 1, out_dir artifacts/dbg_nccl), and helpers.
. test/device/nsa-vibe-env.sh
# what comes back from the box is a handful of files: everything goes into one tarball at exit
REAL_OUT=$OUT; OUT=/tmp/nccl-out/$(basename "$0" .sh); mkdir -p "$OUT"
trap 'tar czf "$REAL_OUT/$(basename "$0" .sh).tgz" -C "$OUT" .' EXIT
export NCCL_NVLS_ENABLE=0
mkdir -p /tmp/nv/.nsa-dbg/presets && cp "$REPO"/test/device/lanes/*.yaml /tmp/nv/.nsa-dbg/presets/
sed -e 's/seq_len: 1024/seq_len: 512/' -e 's/log_every: 20/log_every: 1/' -e 's/batch_size: 1/batch_size: 2/' \
  -e 's#out_dir: "artifacts/small_smoke"#out_dir: "artifacts/dbg_nccl"#' \
  /tmp/nv/configs/m7c_small_smoke.yaml > /tmp/nv/configs/dbg_nccl.yaml
NSA="node /tmp/nsa-app/bin/nsa-dbg"
VIBE="python3 -u scripts/train_showcase.py --dataset synthetic"
newest_run() { ls -td "$1"/*/ 2>/dev/null | head -1; }
# the pid of torchrun's worker with RANK=$1 (not torchrun, not a child of the worker)
pid_of_rank() { python3 - "$1" <<'PY'
import os, sys
want = f"RANK={sys.argv[1]}".encode()
found = []
for p in filter(str.isdigit, os.listdir("/proc")):
    try:
        cmd = open(f"/proc/{p}/cmdline", "rb").read().split(b"\0")
        env = open(f"/proc/{p}/environ", "rb").read().split(b"\0")
    except OSError:
        continue
    joined = b" ".join(cmd)
    if b"train_showcase.py" in joined and b"torch.distributed.run" not in joined and b"torchrun" not in joined and want in env:
        found.append(int(p))
print(min(found) if found else "")
PY
}
wait_for() { # file, pattern, seconds
  i=0; while [ $i -lt "$3" ]; do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.5; i=$((i + 1)); done; return 1
}
# headless JSON and analyze of the same run dir, a short summary of both
summarize() { # tag
  dir=$(newest_run /tmp/runs-$1)
  $NSA analyze "$dir" --json > "$OUT/$1.analyze.json" 2>&1; echo "analyze exit $?"
  rm -f "$dir"/*.pt; tar czf "$OUT/$1-run.tgz" -C "$dir" --exclude=tb --exclude='*.pt' --exclude=.nsa-dbg-py .
  python3 - "$OUT/$1.json" "$OUT/$1.analyze.json" <<'PY' | tee "$OUT/$1.summary.txt"
import json, sys
a = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
b = json.load(open(sys.argv[2]))
print("verdict:", a["verdict"], "GO" if a.get("go") else "NO-GO", "steps", a.get("stepsReached"), "exit", a.get("exitCode"))
print("reasons:", a.get("reasons"))
for k in ("verdict", "stall", "stepsReached", "suspects", "crash"):
    print(f"same {k} live/offline: {a.get(k) == b.get(k)}")
for k in ("crash", "stall", "flightRecorder", "suspects", "outDir", "outDirFrom"):
    if a.get(k): print(k + ":", json.dumps(a[k])[:1500])
for r in a.get("dumpRequests", []):
    print("request:", json.dumps(r))
for d in a.get("dumps", [])[:6]:
    print("dump:", d.get("rank"), d.get("kind"), json.dumps(d.get("mainThreadTop")))
PY
}
