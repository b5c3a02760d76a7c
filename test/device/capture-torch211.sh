#!/bin/sh
# Runs on a lent box with 2 GPUs (no Node there; .device/ carried as in README.md): raw captures of
# what a current torch prints and writes, for the parsers' fixtures. Everything under $OUT/captures.tgz.
#   gloo-tee/ gloo-plain/   ddp_ranks.py crash, 3 ranks on CPU gloo, torchrun with and without --tee 3
#   vibe-gloo/              nsa-vibe under the ddp-gloo lane's env, 2 ranks on one GPU, global batch 1
#   vibe-stock/             nsa-vibe on its stock configs/m7c_3090_smoke.yaml (own out_dir, log_every 20)
#   vibe-nccl-unused/       nsa-vibe under ddp-nccl with default DDP flags, 2 GPUs, global batch 2
#   fr/                     a real NCCL collective timeout with the Flight Recorder on (fr_timeout.py)
set -u
. test/device/nsa-vibe-env.sh
CAP=/tmp/cap; rm -rf $CAP; mkdir -p $CAP
TR="python3 -m torch.distributed.run"
{ date -u; python3 -c 'import sys, torch; print("python", sys.version.split()[0]); print("torch", torch.__version__, "cuda", torch.version.cuda); print([torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())])'
  nvidia-smi -L; command -v torchrun; } > $CAP/env.txt 2>&1
cat $CAP/env.txt
run() { # dir, seconds, command...
  d=$CAP/$1; t=$2; shift 2; mkdir -p $d; s=$(date +%s)
  ( cd "${CWD:-$d}" && NSA_DBG_OUT_DIR=$d timeout "$t" "$@" > $d/stdout.log 2>&1; echo $? > $d/exit_code )
  echo "== $(basename $d): exit $(cat $d/exit_code) after $(( $(date +%s) - s )) s"; tail -4 $d/stdout.log
  printf '%s\n' "$*" > $d/command.txt
}
run gloo-tee 120 $TR --nproc_per_node 3 --tee 3 $REPO/test/fixtures/trainers/ddp_ranks.py crash
run gloo-plain 120 $TR --nproc_per_node 3 $REPO/test/fixtures/trainers/ddp_ranks.py crash
LANE="NSA_TB_DISABLE=1 NSA_DISABLE_CSV_LOGS=1 NSA_HEARTBEAT_EVERY=1 NSA_DISABLE_AUX_STATS=1 NSA_PREFILL_BATCHED=1"
CWD=/tmp/nv run vibe-gloo 180 env $LANE TORCH_BACKEND=gloo $TR --nproc_per_node 2 --tee 3 scripts/train_showcase.py --dataset synthetic --steps 3
sed -e 's/batch_size: 1/batch_size: 2/' /tmp/nv/configs/dbg_small.yaml > /tmp/nv/configs/dbg_small_b2.yaml
CWD=/tmp/nv run vibe-nccl-unused 180 env $LANE TORCH_BACKEND=nccl NCCL_NVLS_ENABLE=0 CONFIG=configs/dbg_small_b2.yaml $TR --nproc_per_node 2 --tee 3 scripts/train_showcase.py --dataset synthetic --steps 6
rm -rf /tmp/nv/artifacts/3090_smoke
CWD=/tmp/nv run vibe-stock 240 env $LANE CONFIG=configs/m7c_3090_smoke.yaml python3 -u scripts/train_showcase.py --dataset synthetic --ddp 0 --steps 3
cp -r /tmp/nv/artifacts/3090_smoke $CAP/vibe-stock/out_dir 2>/dev/null
run fr 150 env TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1 TORCH_NCCL_DEBUG_INFO_TEMP_FILE=$CAP/fr/nccl_trace_rank_ NCCL_NVLS_ENABLE=0 NSA_FR_TIMEOUT_S=20 $TR --nproc_per_node 2 --tee 3 $REPO/test/device/fr_timeout.py
ls -la $CAP/fr
( python3 -m torch.distributed.flight_recorder.fr_trace --help || fr_trace --help || torchfrtrace --help ) > $CAP/fr/fr_trace-help.txt 2>&1
( python3 -m torch.distributed.flight_recorder.fr_trace -p nccl_trace_rank_ $CAP/fr || python3 -m torch.distributed.flight_recorder.fr_trace $CAP/fr ) > $CAP/fr/fr_trace.txt 2>&1
tail -20 $CAP/fr/fr_trace.txt
tar czf $OUT/captures.tgz -C $CAP .
ls -la $OUT
