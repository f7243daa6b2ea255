#!/bin/sh
# The image's entry point: one argument names the role; anything after it is passed on.
# exec: the role replaces this shell as the container's main process and gets SIGTERM itself.
set -eu
role="${1:-main-worker}"
[ "$#" -gt 0 ] && shift
case "$role" in
  main-worker)  exec python -m worker --queue main "$@" ;;
  draft-worker) exec python -m worker --queue draft "$@" ;;
  http)         exec tollgate serve --host 0.0.0.0 "$@" ;;
  codec)        exec python -m tollgate.codec.server "$@" ;;
  migrate)      exec tollgate ops migrate "$@" ;;
  sweep-schedule) exec tollgate ops sweep --install "$@" ;;
  tollgate)     exec tollgate "$@" ;;
  *) echo "tollgate-role: unknown role '$role' (main-worker, draft-worker, http, codec, migrate, sweep-schedule, tollgate)" >&2
     exit 2 ;;
esac
