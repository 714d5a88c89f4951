#!/usr/bin/env bash
# Makes the real kube-apiserver 1.36 and etcd available to the tests that use them (tests/realapi.py).
#
# - kube-apiserver: unpacked from ../shared/tools/kube-apiserver.xz into .cache/kube-apiserver;
# - etcd: Debian's etcd-server package, installed with apt-get when it is missing and we are root.
#
# Best effort by design: without either, the tests that need them skip with a reason, and this
# script says why and exits 0 so that the rest of the suite still runs.
set -u
cd "$(dirname "$0")/.."
xz_file=../shared/tools/kube-apiserver.xz
mkdir -p .cache
if [ ! -x .cache/kube-apiserver ]; then
  if [ -f "$xz_file" ] && command -v xz >/dev/null 2>&1; then
    xz -dkc "$xz_file" > .cache/kube-apiserver.tmp && chmod +x .cache/kube-apiserver.tmp \
      && mv .cache/kube-apiserver.tmp .cache/kube-apiserver \
      && echo "setup-apiserver: unpacked $xz_file into .cache/kube-apiserver"
  else
    echo "setup-apiserver: $xz_file or xz missing: real-API-server tests will skip"
  fi
fi
# kube-scheduler and kube-controller-manager for the real-control-plane tests (tests/realapi.py
# LiveControlPlane, cluster-oracle.py), from the same 1.36 tree
for component in kube-scheduler kube-controller-manager; do
  if [ ! -x ".cache/$component" ] && [ -f "../shared/tools/$component.xz" ] && command -v xz >/dev/null 2>&1; then
    xz -dkc "../shared/tools/$component.xz" > ".cache/$component.tmp" && chmod +x ".cache/$component.tmp" \
      && mv ".cache/$component.tmp" ".cache/$component" \
      && echo "setup-apiserver: unpacked ../shared/tools/$component.xz into .cache/$component"
  fi
done
if ! command -v etcd >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup-apiserver: installing etcd-server with apt-get"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server) >/dev/null 2>&1 \
      || echo "setup-apiserver: apt-get install etcd-server failed: real-API-server tests will skip"
  else
    echo "setup-apiserver: no etcd and cannot install it (not root or no apt-get): real-API-server tests will skip"
  fi
fi
# A package install may start etcd as a system service; the tests start their own on free ports.
exit 0
