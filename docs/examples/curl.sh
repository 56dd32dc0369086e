#!/usr/bin/env bash
# carphoto with curl: every operation and the Assets library.
#
#   CARPHOTO_URL=http://localhost:8080 CARPHOTO_KEY=cp_live_... \
#     PHOTO=../samples/car.jpg LOGO=../samples/plate-design.png OUT=out bash curl.sh
#
# curl --retry retries 408, 429, 500, 502, 503 and 504, waiting what the
# server's Retry-After says (else 1 s, doubling). Photo calls also send an
# Idempotency-Key, so a retry after a lost answer is never charged twice.
set -euo pipefail
: "${CARPHOTO_URL:=http://localhost:8080}" "${CARPHOTO_KEY:?set CARPHOTO_KEY}" "${PHOTO:?set PHOTO}" "${LOGO:?set LOGO}"
OUT=${OUT:-out}
mkdir -p "$OUT"

api() { # api METHOD PATH [curl args...]: prints the body; fails on an error answer
  local method=$1 path=$2
  shift 2
  curl --no-progress-meter --fail-with-body --retry 5 --retry-max-time 120 -X "$method" \
    -H "Authorization: Bearer $CARPHOTO_KEY" "$@" "$CARPHOTO_URL$path"
}

photo() { # photo OPERATION OUTFILE [-F field=value...]: one photo call
  local op=$1 out=$2
  shift 2
  api POST "/v1/$op" -H "Idempotency-Key: $op-$(date +%s%N)" -F "image=@$PHOTO" "$@" \
    -D "$OUT/$op.headers" -o "$out"
  local plates charged remaining
  plates=$(tr -d '\r' <"$OUT/$op.headers" | awk -F': ' 'tolower($1)=="x-plates-found"{print $2}')
  charged=$(tr -d '\r' <"$OUT/$op.headers" | awk -F': ' 'tolower($1)=="x-credits-charged"{print $2}')
  remaining=$(tr -d '\r' <"$OUT/$op.headers" | awk -F': ' 'tolower($1)=="x-credits-remaining"{print $2}')
  echo "$op: plates ${plates:--}, charged $charged, remaining $remaining -> $out"
}

echo "account: $(api GET /v1/account)"
photo blur-plates "$OUT/blurred.jpg" -F style=pixelate
photo plate-logo "$OUT/logo-file.jpg" -F "logo=@$LOGO"

asset=$(api POST /v1/assets -F "file=@$LOGO")
id=$(printf '%s' "$asset" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
echo "asset saved: $id"
photo plate-logo "$OUT/logo-asset.jpg" -F "logoAssetId=$id"
echo "assets: $(api GET /v1/assets)"
echo "asset: $(api GET "/v1/assets/$id")"
photo car-shadow "$OUT/shadow.png" -F reflection=true
api DELETE "/v1/assets/$id"
echo "asset deleted: $id"
