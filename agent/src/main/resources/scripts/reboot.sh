#!/bin/sh
# Reboot the host; the agent reconnects when it is back.
set -eu
echo "::step reboot"
systemctl reboot
