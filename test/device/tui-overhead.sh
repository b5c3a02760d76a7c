#!/bin/sh
# Runs on a lent GPU box: does the TUI slow the trainer down? Interleaved pairs of the same real
# nsa-vibe run (batched prefill, S=512, B=1), A = the trainer alone, B = the trainer under the nsa-dbg
# dashboard in tmux at 120x40; median toks/s of steps 2.. from the step lines. Carried in .device/ as
# for run-nsa-vibe.sh. Usage: tui-overhead.sh PAIRS STEPS
set -u
PAIRS=${1:-3}; STEPS=${2:-8}
. test/device/nsa-vibe-env.sh
cd /tmp/nv
median() { grep -o 'toks/s [0-9.]*' "$1" | awk 'NR>1{print $2}' | sort -n | awk '{a[NR]=$1} END{print (NR%2? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
for i in $(seq 1 "$PAIRS"); do
  out=/tmp/alone-$i; rm -rf "$out"; mkdir -p "$out"
  NSA_TB_DISABLE=1 NSA_DISABLE_CSV_LOGS=1 NSA_HEARTBEAT_EVERY=1 NSA_DISABLE_AUX_STATS=1 NSA_PREFILL_BATCHED=1 \
    NSA_DBG_OUT_DIR=$out python3 -u scripts/train_showcase.py --dataset synthetic --ddp 0 --steps "$STEPS" > "$out/stdout.log" 2>&1
  a=$(median "$out/stdout.log")
  runs=/tmp/tui-$i; rm -rf "$runs"
  tmux -L ab -f /dev/null new-session -d -s t$i -x 120 -y 40 \
    "unset CI; LC_ALL=C.UTF-8 node /tmp/nsa-app/bin/nsa-dbg run --lane batched-prefill --steps $STEPS --runs-dir $runs -- python3 -u scripts/train_showcase.py --dataset synthetic --ddp 0"
  for s in $(seq 1 400); do sleep 1; ls $runs/*/exit_code >/dev/null 2>&1 && break; done
  cpu=$(ps -o etimes=,times= -C node | awk '{print $2/$1*100}' | head -1)
  tmux -L ab send-keys -t t$i q; sleep 1; tmux -L ab send-keys -t t$i y; sleep 3
  tmux -L ab kill-session -t t$i 2>/dev/null
  b=$(median $runs/*/stdout.log)
  echo "pair $i: alone $a toks/s, under the TUI $b toks/s (TUI node process ${cpu}% of a core)" | tee -a "$OUT/overhead.txt"
done
