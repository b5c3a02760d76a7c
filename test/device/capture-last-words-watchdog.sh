#!/bin/sh
# Runs on a lent box with 2 GPUs (no Node there), from the checkout's root: a real NCCL watchdog
# timeout under torchrun with nsa-dbg's stack hook in every rank, installed as nsa-dbg's launcher
# installs it (the hook copied into the run dir, first on PYTHONPATH, the launcher's NSA_DBG_* env).
# test/device/fr_timeout.py: rank 1 sleeps in Python while rank 0 waits in all_reduce #6; rank 0's
# watchdog times out after NSA_FR_TIMEOUT_S and takes the process down (SIGABRT); torchrun then
# sends rank 1 SIGTERM. The run folder comes back as $OUT/lw-watchdog.tgz.
set -u
REPO=$(pwd)
RUN=/tmp/job/lw-watchdog
rm -rf "$RUN"; mkdir -p "$RUN/.nsa-dbg-py"
cp "$REPO/src/stacks/sitecustomize.py" "$RUN/.nsa-dbg-py/"
{ date -u; python3 -c 'import sys, torch; print("python", sys.version.split()[0]); print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version()); print([torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())])'; } > "$RUN/env.txt" 2>&1
cat "$RUN/env.txt"
cd "$RUN" || exit 1
s=$(date +%s)
env PYTHONUNBUFFERED=1 NSA_DBG_RUN_DIR="$RUN" NSA_DBG_OUT_DIR="$RUN" NSA_DBG_STACK_DIR="$RUN" \
  NSA_DBG_STACK_SIGNAL=12 NSA_DBG_STACK_WORKERS=1 PYTHONPATH="$RUN/.nsa-dbg-py" \
  TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1 \
  TORCH_NCCL_DEBUG_INFO_TEMP_FILE="$RUN/nccl_trace_rank_" NCCL_NVLS_ENABLE=0 \
  NSA_FR_TIMEOUT_S=15 NSA_FR_SLEEP_S=120 \
  timeout 240 python3 -m torch.distributed.run --nproc_per_node 2 --tee 3 "$REPO/test/device/fr_timeout.py" \
  > stdout.log 2>&1
echo $? > exit_code
echo "== exit $(cat exit_code) after $(( $(date +%s) - s )) s"
ls -la "$RUN"
tail -30 stdout.log | cut -c1-200
for f in nsa-dbg-stacks_rank*; do echo "== $f"; head -40 "$f"; done
tar czf "$OUT/lw-watchdog.tgz" -C /tmp/job lw-watchdog
