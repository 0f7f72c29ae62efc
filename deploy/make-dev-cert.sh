#!/usr/bin/env bash
# A self-signed certificate for trying the compose setup on this machine (https://localhost:8443).
# Browsers warn about it; in production put a real certificate (e.g. from Let's Encrypt) in
# DURAK_TLS_DIR as fullchain.pem and privkey.pem instead. See docs/security.md.
set -euo pipefail
dir="${1:-$(dirname "$0")/certs}"
mkdir -p "$dir"
openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=localhost" \
  -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
  -keyout "$dir/privkey.pem" -out "$dir/fullchain.pem" 2>/dev/null
chmod 600 "$dir/privkey.pem"
echo "wrote $dir/fullchain.pem and $dir/privkey.pem (self-signed, 30 days)"
