# Sourced by the scripts that run on a lent GPU box (no Node there): unpacks the Node binary and the
# built app (node.xz, app.tar.xz from pack-app.sh) from ${DEVICE_FILES:-$REPO/.device} into
# /tmp/nsa-bin and $APP, puts that node first on PATH, and enters $APP. Unpacked on every call, so a
# warm box never runs an app older than the one carried.
APP=/tmp/nsa-app
mkdir -p "$APP" /tmp/nsa-bin
xz -dc "${DEVICE_FILES:-$REPO/.device}/node.xz" > /tmp/nsa-bin/node && chmod +x /tmp/nsa-bin/node
tar xJf "${DEVICE_FILES:-$REPO/.device}/app.tar.xz" -C "$APP"
export PATH=/tmp/nsa-bin:$PATH PYTHONUNBUFFERED=1
cd "$APP" || exit 1
