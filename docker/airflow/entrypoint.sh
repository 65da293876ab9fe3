#!/usr/bin/env bash
# The image's entrypoint, as the official Airflow image's: `IMAGE scheduler` runs `airflow scheduler`;
# a command starting with airflow, bash, sh or python runs as given.
set -euo pipefail

# docker-compose.yaml runs the image as ${AIRFLOW_UID}:0. A uid without a passwd entry gets one, so that
# getpass and friends work (the image leaves /etc/passwd writable by group 0 for this).
if ! whoami >/dev/null 2>&1 && [ -w /etc/passwd ]; then
  echo "airflow:x:$(id -u):0:airflow user:${HOME}:/bin/bash" >> /etc/passwd
fi

case "${1:-}" in
  "") exec bash ;;
  airflow | bash | sh | python | python3) exec "$@" ;;
  *) exec airflow "$@" ;;
esac
