#!/usr/bin/env bash
# The fleet console's browser test (api: ConsoleBrowserTest) drives Debian's headless Chromium through chromedriver.
# Idempotent: installs only what is missing (as root, from Debian's registry).
set -euo pipefail
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)
if [ ${#missing[@]} -gt 0 ]; then
  flock /var/lock/warmmetal-apt.lock apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive flock /var/lock/warmmetal-apt.lock apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
