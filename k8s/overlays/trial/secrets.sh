#!/usr/bin/env bash
# Makes everything secret a trial installation needs, with nothing but openssl and kubectl:
#   - the Secret "async-jobs" (database password, download-link signing key, token public key),
#     applied to the namespace given as $1 (default async-jobs), which is created if missing;
#   - a token issuer of your own: its private key and two tokens (a user's and an admin's, valid
#     12 hours) written to ./trial-keys/ (git ignores it).
# Run it again to make fresh tokens: an existing key pair and Secret are kept.
# Usage: k8s/overlays/trial/secrets.sh [namespace]
#        k8s/overlays/trial/secrets.sh --tokens-only   (keys and tokens, no cluster needed)
# TRIAL_KEYS_DIR puts the keys and tokens elsewhere.
set -euo pipefail
namespace="${1:-async-jobs}"
dir="${TRIAL_KEYS_DIR:-$(cd "$(dirname "$0")" && pwd)/trial-keys}"
# Must equal MP_JWT_VERIFY_ISSUER in config.yaml.
issuer=async-jobs-trial
mkdir -p "$dir"
chmod 700 "$dir"

if [ ! -f "$dir/private.pem" ]; then
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$dir/private.pem" 2>/dev/null
  openssl pkey -in "$dir/private.pem" -pubout -out "$dir/public.pem"
fi

if [ "$namespace" != --tokens-only ]; then
  if ! kubectl get namespace "$namespace" >/dev/null 2>&1; then
    kubectl create namespace "$namespace"
  fi
  if ! kubectl -n "$namespace" get secret async-jobs >/dev/null 2>&1; then
    kubectl -n "$namespace" create secret generic async-jobs \
      --from-literal=db-username=async_jobs \
      --from-literal=db-password="$(openssl rand -hex 24)" \
      --from-literal=signing-key="$(openssl rand -base64 32)" \
      --from-literal=callbacks-key="$(openssl rand -base64 32)" \
      --from-file=jwt-public-key.pem="$dir/public.pem"
  fi
  echo "Secret async-jobs is in namespace $namespace."
fi

# An RS256 JWT signed with the trial key: header.payload.signature, each base64url.
b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }
token() {
  local sub="$1" group="$2" now header payload signature
  now=$(date +%s)
  header=$(printf '{"alg":"RS256","typ":"JWT"}' | b64url)
  payload=$(printf '{"iss":"%s","sub":"%s","groups":["%s"],"iat":%d,"exp":%d}' \
    "$issuer" "$sub" "$group" "$now" "$((now + 12 * 3600))" | b64url)
  signature=$(printf '%s.%s' "$header" "$payload" |
    openssl dgst -sha256 -sign "$dir/private.pem" -binary | b64url)
  printf '%s.%s.%s\n' "$header" "$payload" "$signature"
}
token trial-user user >"$dir/user.token"
token trial-admin admin >"$dir/admin.token"
echo "Tokens (valid 12 hours): $dir/user.token (owner user:trial-user, whose folder is files/user/trial-user/), $dir/admin.token (admin)."
