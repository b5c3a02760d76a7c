#!/bin/sh
# `nsa-dbg check` on a GPU box lent for checks (no Node there): the raw sources the checks read
# (captured for test/fixtures/preflight/), a healthy box, then each fault injected without touching
# a device setting. Carried in .device/preflight/: node.xz, app.tar.xz (the built app with its
# production deps), this script and lanes/ (the preflight-*.yaml lanes beside it).
# Usage: sh test/device/preflight.sh [two]   (two: the 2-GPU cases). Output goes to $OUT.
set -u
REPO=$PWD
D=$REPO/.device/preflight
R=$OUT/preflight
mkdir -p "$R/raw"
DEVICE_FILES=$D . "$REPO/test/device/unpack-app.sh"
export XDG_CONFIG_HOME=/tmp/xdg
mkdir -p /tmp/xdg/nsa-dbg/presets && cp "$D"/lanes/preflight-*.yaml /tmp/xdg/nsa-dbg/presets/

# the raw sources, as the probe reads them
nvidia-smi -q > "$R/raw/nvidia-smi-q.txt" 2>&1
nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv,noheader,nounits > "$R/raw/compute-apps.csv" 2>&1
nvidia-smi nvlink -s > "$R/raw/nvlink-s.txt" 2>&1; echo "exit $?" >> "$R/raw/nvlink-s.txt"
nvidia-smi --query-gpu=index,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max --format=csv,noheader,nounits > "$R/raw/pcie-idle.csv" 2>&1
{ nvidia-smi --version; python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda, torch.cuda.nccl.version())'; cat /proc/sys/kernel/yama/ptrace_scope; grep CapEff /proc/self/status; df -Pk /tmp; command -v py-spy; uname -r; } > "$R/raw/env.txt" 2>&1
(dmesg 2>&1 | grep -i -e xid -e nvrm | tail -50; echo "dmesg exit $?") > "$R/raw/dmesg-nvrm.txt"

# one check: its text, its JSON (with the probe's raw sources kept by NSA_DBG_PREFLIGHT_RAW) and timing
check() {
  tag=$1; shift
  s=$(date +%s%N)
  node bin/nsa-dbg check "$@" > "$R/$tag.txt" 2> "$R/$tag.err"
  rc=$?
  e=$(date +%s%N)
  NSA_DBG_PREFLIGHT_RAW="$R/$tag.probe.jsonl" node bin/nsa-dbg check --json "$@" > "$R/$tag.json" 2>> "$R/$tag.err"
  echo "$tag exit $rc wall $(( (e - s) / 1000000 )) ms" | tee -a "$R/summary.txt"
  grep -e FAIL -e WARN -e GO "$R/$tag.txt" | head -12
}

if [ "${1:-}" = two ]; then
  check two-healthy --lane preflight-two
  check two-nop2p --lane preflight-two-nop2p
else
  check healthy
  check healthy-two-ranks --lane preflight-two
  check hidden --lane preflight-hidden
  python3 -m venv --without-pip /tmp/bare 2>/dev/null || { mkdir -p /tmp/bare/bin; printf '#!/bin/sh\nexec python3 -S "$@"\n' > /tmp/bare/bin/python3; chmod +x /tmp/bare/bin/python3; }
  check notorch --lane preflight-notorch
  check nop2p-one-gpu --lane preflight-two-nop2p
  # a nearly full disk at the out_dir: a 64 MiB tmpfs filled to 60 MiB (no device setting touched)
  # (where mounting is not allowed, a container's own small /dev/shm stands in)
  SMALL=/mnt/nsa-small
  mkdir -p $SMALL && mount -t tmpfs -o size=64m tmpfs $SMALL || SMALL=/dev/shm
  avail=$(df -Pk $SMALL | awk 'NR==2 {print $4}')
  dd if=/dev/zero of=$SMALL/nsa-fill bs=1M count=$(( avail / 1024 - 4 )) 2>/dev/null
  df -Pk $SMALL > "$R/raw/df-small.txt"
  check fulldisk --out-dir $SMALL/out
  rm -f $SMALL/nsa-fill; [ $SMALL = /dev/shm ] || umount $SMALL
  # a foreign process holding most of the GPU's memory
  python3 -c 'import torch,time; f=torch.cuda.mem_get_info()[0]; x=torch.empty(int(f*0.8),dtype=torch.uint8,device="cuda"); print("held",x.numel()>>20,"MiB",flush=True); time.sleep(300)' > "$R/foreign.log" 2>&1 &
  FP=$!
  for i in $(seq 1 30); do grep -q held "$R/foreign.log" && break; sleep 1; done
  nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv,noheader,nounits > "$R/raw/compute-apps-foreign.csv" 2>&1
  nvidia-smi -q > "$R/raw/nvidia-smi-q-foreign.txt" 2>&1
  check foreign
  kill $FP
fi
cd "$OUT" && tar czf preflight.tgz preflight && rm -rf preflight
