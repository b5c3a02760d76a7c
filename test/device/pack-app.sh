#!/bin/sh
# Packs what a device run carries in .device/ (ignored by git): the built app with its production
# dependencies (app.tar.xz). node.xz, nsa-vibe.tar and pylib.tar are made once (README.md beside this).
# Run from the repo root.
set -eu
tmp=$(mktemp -d)
git ls-files -z --cached --others --exclude-standard | grep -zv '^test/\|^bench/' | xargs -0 cp --parents -t "$tmp"
(cd "$tmp" && npm ci --no-fund --no-audit --ignore-scripts >/dev/null && npm rebuild >/dev/null 2>&1 || true)
(cd "$tmp" && npx tsc -p tsconfig.json && npm prune --omit=dev --no-fund --no-audit >/dev/null)
mkdir -p .device
tar cJf .device/app.tar.xz -C "$tmp" --exclude=.git .
rm -rf "$tmp"
ls -la .device/app.tar.xz
