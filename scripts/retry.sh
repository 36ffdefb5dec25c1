# svc_retry CMD...: runs CMD up to $SVC_RETRIES times (default 4), waiting 5, 10, 20 s between attempts.
# For the steps that fetch from the network (npm registry, Debian mirrors): one dropped connection or idle
# timeout there must not fail a whole CI run. POSIX sh, so every script here can source it.
svc_retry() {
  svc_retry_left="${SVC_RETRIES:-4}"
  svc_retry_wait=5
  while :; do
    if "$@"; then return 0; fi
    svc_retry_left=$((svc_retry_left - 1))
    if [ "$svc_retry_left" -le 0 ]; then
      echo "svc_retry: giving up on: $*" >&2
      return 1
    fi
    echo "svc_retry: failed, retrying in ${svc_retry_wait}s: $*" >&2
    sleep "$svc_retry_wait"
    svc_retry_wait=$((svc_retry_wait * 2))
  done
}
