#!/usr/bin/env bash
# Makes Debian's chromium (and chromedriver) available to `draguard ui`'s browser tests (tests/ui/).
#
# The tests drive the system browser through the playwright Python package (a dev dependency that
# brings its driver only — no browser download).  Best effort: without root or apt the browser
# tests skip with the reason, and this script says why and exits 0.  A chromium already on PATH
# (or $DRAGUARD_CHROMIUM) is used as it is.
set -u
say() { echo "setup-chromium: $*"; }
if [ -n "${DRAGUARD_CHROMIUM:-}" ] || command -v chromium >/dev/null 2>&1; then
  exit 0
fi
command -v apt-get >/dev/null 2>&1 || { say "no apt-get: the browser tests will skip"; exit 0; }
sudo=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null || { say "not root and no sudo: the browser tests will skip"; exit 0; }
  sudo="sudo -n"
fi
export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get install -y -qq --no-install-recommends chromium chromium-driver fonts-dejavu-core >/tmp/setup-chromium.log 2>&1; then
  $sudo apt-get update -qq >>/tmp/setup-chromium.log 2>&1
  $sudo apt-get install -y -qq --no-install-recommends chromium chromium-driver fonts-dejavu-core >>/tmp/setup-chromium.log 2>&1 \
    || { say "apt-get install chromium failed ($(tail -n 1 /tmp/setup-chromium.log)): the browser tests will skip"; exit 0; }
fi
say "$(chromium --version 2>/dev/null)"
