#!/bin/sh
# Installs each engine of engines/debian-packages.txt (or the list given) whose program is missing:
# everything in a fresh image (engines/Dockerfile), what a CI machine lacks (.ci/run). Needs root.
set -eu
list="${1:-$(dirname "$0")/debian-packages.txt}"
updated=no
sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$list" | while read -r engine program packages; do
  [ -x "$program" ] && continue
  if [ "$updated" = no ]; then apt-get update -qq; updated=yes; fi
  # $packages unquoted on purpose: one apt-get argument per word.
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages >/dev/null
  [ -x "$program" ] || { echo "$engine: $packages installed, but $program is not there" >&2; exit 1; }
done
