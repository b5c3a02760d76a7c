# Sourced by the device scripts (run from the repo root): unpacks what .device/ carries (a Node
# binary, the built app, nsa-vibe's `git archive`, Debian's pure-Python omegaconf) once per box and
# sets the environment for nsa-vibe's own trainer with a small smoke config (S=512, log every step,
# out_dir from NSA_DBG_OUT_DIR so the trainer writes into the run dir nsa-dbg gives it).
REPO=$PWD
mkdir -p /tmp/nsa-bin /tmp/nsa-app /tmp/nv /tmp/pylib
[ -x /tmp/nsa-bin/node ] || { xz -dc "$REPO/.device/node.xz" > /tmp/nsa-bin/node && chmod +x /tmp/nsa-bin/node; }
[ -f /tmp/nsa-app/package.json ] || tar xJf "$REPO/.device/app.tar.xz" -C /tmp/nsa-app
[ -d /tmp/nv/scripts ] || tar xf "$REPO/.device/nsa-vibe.tar" -C /tmp/nv
[ -d /tmp/pylib/omegaconf ] || tar xf "$REPO/.device/pylib.tar" -C /tmp/pylib
export PATH=/tmp/nsa-bin:$PATH PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pylib:/tmp/nv
sed -e 's/seq_len: 1024/seq_len: 512/' -e 's/log_every: 20/log_every: 1/' \
  -e 's#out_dir: "artifacts/small_smoke"#out_dir: "${oc.env:NSA_DBG_OUT_DIR,artifacts/x}"#' \
  /tmp/nv/configs/m7c_small_smoke.yaml > /tmp/nv/configs/dbg_small.yaml
export CONFIG=configs/dbg_small.yaml
