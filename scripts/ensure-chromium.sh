#!/bin/sh
# Makes sure Debian's Chromium is at /usr/bin/chromium for the browser tests (test/browser/**): installs it
# with apt-get when missing (the tests run as root here and in CI). Refreshes the package lists only when
# the first install attempt fails. Prints the browser's version on success.
set -eu

CHROMIUM=/usr/bin/chromium

if [ -x "$CHROMIUM" ]; then
  "$CHROMIUM" --version 2>/dev/null || true
  exit 0
fi

if [ "$(id -u)" != "0" ]; then
  echo "ensure-chromium: $CHROMIUM is missing and this user cannot install it (run: apt-get install -y chromium as root)" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
install() {
  apt-get install -y -o DPkg::Lock::Timeout=300 chromium
}

. "$(dirname "$0")/retry.sh"
if ! install; then
  svc_retry apt-get update
  svc_retry install
fi

if [ ! -x "$CHROMIUM" ]; then
  echo "ensure-chromium: apt-get finished but $CHROMIUM is still missing" >&2
  exit 1
fi
"$CHROMIUM" --version 2>/dev/null || true
