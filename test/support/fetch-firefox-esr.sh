#!/usr/bin/env bash
# Every Firefox ESR that Debian offers this machine, beside the one installed: Debian 12 lists 140 ESR
# (bookworm) and its security updates' newer ESR, and a machine of this kind may have either, so the
# browser tests run in each (test/support/find-browsers.mjs finds them). Each is downloaded with
# apt-get and unpacked, not installed, into .browsers/firefox-esr-<version>/ (git ignores the folder);
# the installed firefox-esr brings the libraries they share. Needs `apt-get update` done once.
set -euo pipefail
cd "$(dirname "$0")/../.."
installed=$(dpkg-query -W -f='${Version}' firefox-esr 2>/dev/null || true)
if [ -z "$installed" ]; then
  echo "firefox-esr is not installed: install it first (apt-get install -y firefox-esr)" >&2
  exit 1
fi
mkdir -p .browsers
for version in $(apt-cache madison firefox-esr | awk -F'|' '{gsub(/ /, "", $2); print $2}' | sort -u); do
  [ "$version" = "$installed" ] && continue
  folder=".browsers/firefox-esr-${version%%-*}"
  [ -x "$folder/usr/lib/firefox-esr/firefox-esr" ] && continue
  download=$(mktemp -d)
  # apt-get download writes to the current folder; as root it warns that _apt cannot write there.
  if (cd "$download" && chmod 777 . && apt-get download -qq "firefox-esr=$version" 2>/dev/null); then
    rm -rf "$folder" && mkdir -p "$folder"
    dpkg-deb -x "$download"/firefox-esr_*.deb "$folder"
    echo "Firefox ESR $version unpacked in $folder for the browser tests"
  else
    echo "Firefox ESR $version could not be downloaded: the tests run without it" >&2
  fi
  rm -rf "$download"
done
