#!/usr/bin/env bash
# `make run`: the webhook on https://127.0.0.1:8443 with the demo inventory.
# Generates a self-signed CA and serving certificate into certs/ on first use, prints two
# ready-to-paste curl commands, then serves in the foreground (Ctrl-C stops it).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8443}

if [ ! -s certs/tls.crt ] || [ ! -s certs/tls.key ] || [ ! -s certs/ca.crt ]; then
  "$BIN/draguard" certs --service draguard --namespace draguard --out certs \
    --san "$HOST" --san localhost >/dev/null
  echo "generated a self-signed CA and serving certificate in certs/"
fi

cat <<MSG

draguard is starting on https://$HOST:$PORT with the demo inventory (examples/inventory).
Try, from another terminal in this folder:

  # 1. an AdmissionReview for a claim that asks 50Gi of 40Gi GPUs: denied, with the reason
  curl -s --cacert certs/ca.crt -H 'Content-Type: application/json' \\
       --data @examples/admission/unsatisfiable-claim.json https://$HOST:$PORT/validate | python3 -m json.tool

  # 2. lint a folder of manifests against the server's inventory (text output)
  awk 'FNR==1 {print "---"} {print}' examples/claims/bad/*.yaml | curl -s --cacert certs/ca.crt \\
       -H 'Content-Type: application/yaml' --data-binary @- "https://$HOST:$PORT/lint?format=text"

MSG
exec "$BIN/draguard" serve --host "$HOST" --port "$PORT" \
  --tls-cert certs/tls.crt --tls-key certs/tls.key --inventory examples/inventory
