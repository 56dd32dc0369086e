#!/usr/bin/env bash
# carphoto with curl: every operation, the Assets library and a video job.
#
#   CARPHOTO_URL=http://localhost:8080 CARPHOTO_KEY=cp_live_... \
#     PHOTO=../samples/car.jpg LOGO=../samples/plate-design.png BACKDROP=../samples/backdrop.jpg \
#     IMAGE_URL=https://example.com/car.jpg VIDEO=walkaround.mp4 \
#     WEBHOOK_SECRET=... WEBHOOK_URL=https://you.example.com/carphoto WEBHOOK_INBOX=/srv/hooks \
#     OUT=out bash curl.sh
#
# IMAGE_URL, VIDEO and the WEBHOOK_* are optional: without them the photo by
# URL, the video job or its webhook is left out, saying so.
#
# curl --retry retries 408, 429, 500, 502, 503 and 504, waiting what the
# server's Retry-After says (else 1 s, doubling). Photo and video calls also
# send an Idempotency-Key, so a retry after a lost answer is never charged
# twice. A video job is polled as its Retry-After says: every poll counts
# toward the key's rate limit.
#
# A shell script cannot receive a webhook: your endpoint at WEBHOOK_URL does,
# and saves each delivery in WEBHOOK_INBOX as NAME.json (the body, byte for
# byte) and NAME.signature (its Carphoto-Signature header); verify_webhook
# below checks one with openssl before it is believed.
set -euo pipefail
: "${CARPHOTO_URL:=http://localhost:8080}" "${CARPHOTO_KEY:?set CARPHOTO_KEY}" "${PHOTO:?set PHOTO}" "${LOGO:?set LOGO}" "${BACKDROP:?set BACKDROP}"
OUT=${OUT:-out}
mkdir -p "$OUT"

api() { # api METHOD PATH [curl args...]: prints the body; fails on an error answer
  local method=$1 path=$2
  shift 2
  curl --no-progress-meter --fail-with-body --retry 5 --retry-max-time 120 -X "$method" \
    -H "Authorization: Bearer $CARPHOTO_KEY" "$@" "$CARPHOTO_URL$path"
}

header() { # header NAME FILE: the value of a header in a file curl -D wrote
  tr -d '\r' <"$2" | awk -F': ' -v name="$1" 'tolower($1)==tolower(name){print $2}' | tail -1
}

field() { # field NAME: a string field of the JSON object on stdin
  sed -n 's/.*"'"$1"'":"\([^"]*\)".*/\1/p'
}

photo() { # photo OPERATION OUTFILE [-F field=value...]: one photo call
  local op=$1 out=$2
  shift 2
  api POST "/v1/$op" -H "Idempotency-Key: $op-$(date +%s%N)" "$@" -D "$OUT/$op.headers" -o "$out"
  echo "$op: plates $(header X-Plates-Found "$OUT/$op.headers" | grep . || echo -)," \
    "charged $(header X-Credits-Charged "$OUT/$op.headers"), remaining $(header X-Credits-Remaining "$OUT/$op.headers") -> $out"
}

# verify_webhook SIGNATURE BODYFILE: succeeds when the body was signed by the
# service (Carphoto-Signature: t=<unix time>,v1=<hex HMAC-SHA256 of
# "<t>.<body>"> under WEBHOOK_SECRET) less than 5 minutes ago.
verify_webhook() {
  local t v1 want now
  t=$(sed -n 's/^t=\([0-9]\{1,\}\),v1=[0-9a-f]\{64\}$/\1/p' <<<"$1")
  v1=${1##*,v1=}
  [ -n "$t" ] || return 1
  now=$(date +%s)
  [ $((now - t)) -le 300 ] && [ $((t - now)) -le 300 ] || return 1
  want=$({ printf '%s.' "$t"; cat "$2"; } | openssl dgst -sha256 -hmac "$WEBHOOK_SECRET" -r | cut -d' ' -f1)
  [ "$want" = "$v1" ]
}

video_blur() { # video_blur OUTFILE: submit VIDEO, poll as told, fetch the MP4, check the webhook
  local out=$1 hook=() job id status wait=2 polls=0
  if [ -n "${WEBHOOK_SECRET:-}" ] && [ -n "${WEBHOOK_URL:-}" ]; then
    hook=(-F "webhookUrl=$WEBHOOK_URL")
  else
    echo "video-blur: no WEBHOOK_SECRET and WEBHOOK_URL: polling only, no webhook"
  fi
  job=$(api POST /v1/video-blur -H "Idempotency-Key: video-$(date +%s%N)" -F "video=@$VIDEO" -F style=blur "${hook[@]}")
  id=$(field id <<<"$job")
  echo "video-blur: job $id $(field status <<<"$job")"
  while :; do
    sleep "$wait"
    api GET "/v1/jobs/$id" -D "$OUT/job.headers" -o "$OUT/job.json"
    polls=$((polls + 1))
    status=$(field status <"$OUT/job.json")
    case $status in done | failed) break ;; esac
    wait=$(header Retry-After "$OUT/job.headers")
    wait=${wait:-2}
    echo "  $status, $(sed -n 's/.*"progress":\({[^}]*}\).*/\1/p' "$OUT/job.json"); next look in $wait s" >&2
  done
  if [ "$status" != done ]; then
    echo "video-blur: job $id failed, uncharged: $(cat "$OUT/job.json")" >&2
    return 1
  fi
  api GET "/v1/jobs/$id/result" -o "$out"
  echo "video-blur: job $id done after $polls polls (following Retry-After) -> $out"
  [ ${#hook[@]} -gt 0 ] && [ -n "${WEBHOOK_INBOX:-}" ] || return 0
  local delivery=""
  for _ in $(seq 1 60); do
    delivery=$(grep -l "\"id\":\"$id\"" "$WEBHOOK_INBOX"/*.json 2>/dev/null | head -1) && [ -n "$delivery" ] && break
    sleep 1
  done
  [ -n "$delivery" ] || { echo "webhook: no delivery for job $id in $WEBHOOK_INBOX within 60 s" >&2; return 1; }
  if ! verify_webhook "$(cat "${delivery%.json}.signature")" "$delivery"; then
    echo "webhook: the signature of $delivery does not match: not from the service, ignored" >&2
    return 1
  fi
  echo "webhook: signature verified: $(cat "$delivery")"
}

echo "account: $(api GET /v1/account)"
photo blur-plates "$OUT/blurred.jpg" -F "image=@$PHOTO" -F style=pixelate
photo plate-logo "$OUT/logo-file.jpg" -F "image=@$PHOTO" -F "logo=@$LOGO"

asset=$(api POST /v1/assets -F "file=@$LOGO")
id=$(field id <<<"$asset")
echo "asset saved: $id"
photo plate-logo "$OUT/logo-asset.jpg" -F "image=@$PHOTO" -F "logoAssetId=$id"
photo logo-overlay "$OUT/watermarked.jpg" -F "image=@$PHOTO" -F "logoAssetId=$id" -F position=top-right -F opacity=0.8
echo "assets: $(api GET /v1/assets)"
echo "asset: $(api GET "/v1/assets/$id")"
photo car-shadow "$OUT/shadow.png" -F "image=@$PHOTO" -F reflection=true
photo car-cutout "$OUT/cutout.png" -F "image=@$PHOTO" -F crop=true -F padding=5%
photo car-shadow "$OUT/studio.png" -F "image=@$PHOTO" -F "backgroundImage=@$BACKDROP" -F floorY=0.9
if [ -n "${IMAGE_URL:-}" ]; then
  photo blur-plates "$OUT/by-url.jpg" -F "imageUrl=$IMAGE_URL"
else
  echo "blur-plates by imageUrl: no IMAGE_URL, left out"
fi
api DELETE "/v1/assets/$id"
echo "asset deleted: $id"
if [ -n "${VIDEO:-}" ]; then
  video_blur "$OUT/blurred.mp4"
else
  echo "video-blur: no VIDEO, left out"
fi
