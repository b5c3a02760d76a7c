#!/bin/sh
# Runs on a GPU box lent for checks (no Node there): unpacks a Node binary and the built app
# carried in .device/, then drives nsa-dbg against a real CUDA process. Output goes to $OUT.
set -u
REPO=$PWD
. "$REPO/test/device/unpack-app.sh"
TRAINER="$REPO/test/device/cuda_trainer.py"
{
  node --version; python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.get_device_name(0))'
  nvidia-smi --query-gpu=timestamp,index,name,memory.used,memory.total,utilization.gpu,temperature.gpu,power.draw --format=csv,noheader,nounits
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

echo "== headless baseline (expect a stall at step 6, a SIGUSR1 dump from the CUDA process, NO-GO)"
node bin/nsa-dbg run --headless --json --lane baseline --steps 12 --runs-dir /tmp/runs-a -- python3 "$TRAINER" > "$OUT/baseline.json" 2> "$OUT/baseline.err"
echo "exit $?"; head -c 1500 "$OUT/baseline.json"; echo
cp /tmp/runs-a/*/stackdump_*.txt "$OUT/" 2>/dev/null

echo "== headless batched-prefill (expect GO)"
node bin/nsa-dbg run --headless --json --lane batched-prefill --steps 10 --runs-dir /tmp/runs-b -- python3 "$TRAINER" > "$OUT/batched.json" 2> "$OUT/batched.err"
echo "exit $?"; head -c 800 "$OUT/batched.json"; echo

echo "== TUI in tmux at 120x40 on the real GPU"
tmux -L dev -f /dev/null new-session -d -s t -x 120 -y 40 "unset CI; NSA_DBG_LOG=$OUT/tui-engine.log node bin/nsa-dbg run --lane baseline --steps 12 --runs-dir /tmp/runs-c -- python3 $TRAINER; sleep 60"
sleep 22
tmux -L dev capture-pane -p -t t > "$OUT/tui-stall.txt"
tmux -L dev send-keys -t t d
sleep 4
tmux -L dev capture-pane -p -t t > "$OUT/tui-dump.txt"
cat "$OUT/tui-dump.txt"
tmux -L dev send-keys -t t q; sleep 1; tmux -L dev send-keys -t t y
start=$(date +%s)
for i in $(seq 1 30); do sleep 1; pgrep -f '^node bin/nsa-dbg run' >/dev/null || break; done
echo "quit took $(( $(date +%s) - start )) s"
tmux -L dev capture-pane -p -t t > "$OUT/tui-quit.txt"
cat "$OUT/tui-engine.log"
tmux -L dev kill-server
