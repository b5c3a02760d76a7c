#!/bin/sh
# Issue 21 on 2 × H200 over NCCL, part B (run 3 and 5): rank 1 SIGSTOPped at step 6 under the
# ddp-static-graph lane; resumed after 45 s inside a 60 s confirm window (slow), never resumed (a
# hang on rank 1); then the dashboard in tmux on the latter, `d` while stopped and after SIGCONT.
set -u
. test/device/nccl-common.sh
cd /tmp/nv
export CONFIG=configs/dbg_nccl.yaml
stop_rank1() { # tag, seconds stopped (0: never resumed)
  dir=""; while [ -z "$dir" ]; do sleep 0.5; dir=$(newest_run /tmp/runs-$1); done
  wait_for "$dir/stdout.log" "step 0005" 240 || { echo "no step 5"; return; }
  p=$(pid_of_rank 1); kill -STOP "$p"; echo "SIGSTOP rank 1 pid $p at $(date +%s.%N)"
  [ "$2" -gt 0 ] || return 0
  sleep "$2"; kill -CONT "$p"; echo "SIGCONT rank 1 at $(date +%s.%N)"
}
for case in "3a-cont nccl-stop-window 45" "3b-stopped ddp-static-graph 0"; do
  set -- $case; tag=$1; rm -rf artifacts/dbg_nccl; s=$(date +%s)
  stop_rank1 "$tag" "$3" > "$OUT/$tag.signals.txt" 2>&1 &
  NSA_DBG_LOG="$OUT/$tag.engine.log" $NSA run --headless --json --lane "$2" --steps 10 --runs-dir /tmp/runs-$tag \
    -- $VIBE > "$OUT/$tag.json" 2> "$OUT/$tag.err"
  echo "== $tag: exit $? after $(( $(date +%s) - s )) s"; wait; cat "$OUT/$tag.signals.txt"; summarize "$tag"
done
echo "== run 5: the dashboard in tmux (120x40) on run 3 with no SIGCONT"
rm -rf artifacts/dbg_nccl
tmux -L dev -f /dev/null new-session -d -s t -x 120 -y 40 "unset CI; NSA_DBG_LOG=$OUT/5-tui.engine.log $NSA run --lane ddp-static-graph --steps 10 --runs-dir /tmp/runs-5-tui -- $VIBE; sleep 60"
snap() { tmux -L dev capture-pane -p -t t > "$OUT/5-tui-$1.txt"; echo "-- $1"; cat "$OUT/5-tui-$1.txt"; }
dir=""; while [ -z "$dir" ]; do sleep 0.5; dir=$(newest_run /tmp/runs-5-tui); done
wait_for "$dir/stdout.log" "step 0005" 240; p=$(pid_of_rank 1); kill -STOP "$p"; t0=$(date +%s)
for i in $(seq 1 90); do sleep 1; tmux -L dev capture-pane -p -t t | grep -q "ROOT CAUSE" && break; done
echo "ROOT CAUSE shown $(( $(date +%s) - t0 )) s after SIGSTOP"; snap 1-stopped
tmux -L dev send-keys -t t d; sleep 6; snap 2-d-while-stopped
kill -CONT "$p"; sleep 4; tmux -L dev send-keys -t t d; sleep 6; snap 3-d-after-cont
tmux -L dev send-keys -t t q; sleep 1; tmux -L dev send-keys -t t y; sleep 8; snap 4-quit
ls "$dir" > "$OUT/5-tui-files.txt"; tmux -L dev kill-server
