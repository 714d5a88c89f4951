#!/usr/bin/env bash
# Makes the real Kubernetes 1.36 control plane available to the tests that use it (tests/realapi.py,
# scripts/e2e-kube.py, scripts/cluster-oracle.py): kube-apiserver, kube-scheduler,
# kube-controller-manager into .cache/, and etcd.
#
# Where the binaries come from, first that works:
#   1. ../shared/tools/<name>.xz beside the clone (the team's copies, built from the v1.36.2 tree);
#   2. the official Kubernetes release, v1.36.2 for linux/amd64, checked against its published
#      sha256 — where the network allows (a short connect timeout: a sandbox without it moves on);
#   3. nothing: the tests that need them skip, and `make test`'s closing summary says which and why.
# etcd: on PATH already, else Debian's etcd-server (apt-get install as root; as another user,
# apt-get download + dpkg -x into .cache/etcd-server/).
#
# Best effort by design: it says what it did or why not and exits 0, so the rest of the suite runs.
set -u
cd "$(dirname "$0")/.."
VERSION=v1.36.2
RELEASE="https://dl.k8s.io/release/$VERSION/bin/linux/amd64"
SHARED=../shared/tools
mkdir -p .cache
say() { echo "setup-apiserver: $*"; }

fetch_release() {  # name -> .cache/name from the release, verified; 1 when it cannot be had
  local name=$1 want
  command -v curl >/dev/null 2>&1 || return 1
  [ "$(uname -m)" = x86_64 ] || return 1
  want=$(curl -fsSL --connect-timeout 5 --max-time 20 "$RELEASE/$name.sha256" 2>/dev/null) || return 1
  curl -fsSL --connect-timeout 5 --max-time 300 -o ".cache/$name.tmp" "$RELEASE/$name" 2>/dev/null || { rm -f ".cache/$name.tmp"; return 1; }
  if [ "$(sha256sum ".cache/$name.tmp" | cut -d' ' -f1)" != "$want" ]; then
    say "$name from the release does not match its sha256: not used"; rm -f ".cache/$name.tmp"; return 1
  fi
  chmod +x ".cache/$name.tmp" && mv ".cache/$name.tmp" ".cache/$name"
}

offline=""
for name in kube-apiserver kube-scheduler kube-controller-manager; do
  [ -x ".cache/$name" ] && continue
  if [ -f "$SHARED/$name.xz" ] && command -v xz >/dev/null 2>&1; then
    xz -dkc "$SHARED/$name.xz" > ".cache/$name.tmp" && chmod +x ".cache/$name.tmp" \
      && mv ".cache/$name.tmp" ".cache/$name" && say "unpacked $SHARED/$name.xz into .cache/$name"
  elif [ -z "$offline" ] && fetch_release "$name"; then
    say "downloaded $name $VERSION from the Kubernetes release into .cache/$name (sha256 checked)"
  else
    offline=1
    say "$name: no $SHARED/$name.xz and the Kubernetes release cannot be reached: the tests that need it will skip"
  fi
done

if [ -n "${ETCD:-}" ] && [ -x "$ETCD" ]; then
  :  # the caller's own etcd
elif ! command -v etcd >/dev/null 2>&1 && [ ! -x .cache/etcd-server/usr/bin/etcd ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing etcd-server with apt-get"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server) >/dev/null 2>&1 \
      || say "apt-get install etcd-server failed: real-API-server tests will skip"
  elif command -v apt-get >/dev/null 2>&1 && command -v dpkg >/dev/null 2>&1; then
    tmp=$(mktemp -d)
    if (cd "$tmp" && apt-get download etcd-server >/dev/null 2>&1) && dpkg -x "$tmp"/etcd-server_*.deb .cache/etcd-server; then
      say "unpacked etcd-server into .cache/etcd-server (not root: no install)"
    else
      say "no etcd and apt-get download etcd-server failed: real-API-server tests will skip"
    fi
    rm -rf "$tmp"
  else
    say "no etcd and no apt-get: real-API-server tests will skip"
  fi
fi
# A package install may start etcd as a system service; the tests start their own on free ports.
exit 0
