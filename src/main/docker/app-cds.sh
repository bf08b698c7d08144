#!/bin/bash
# Writes the class-data archive (AppCDS) of the packaged app in folder $1 to $1/app-cds.jsa, for
# `java -XX:SharedArchiveFile=$1/app-cds.jsa -jar $1/quarkus-run.jar`: each start then maps the
# classes a start loads instead of reading, parsing and verifying them again (docs/benchmarks.md,
# "Start-up"). Dockerfile.jvm runs it in its final stage, so the archive is made by the JVM that
# uses it and names the jar by the path the image starts it from (a JVM ignores an archive made by
# another JVM or for another class path, and starts without it).
#
# A training start: the app starts as a replica that processes nothing (lock mode none), against a
# database address that refuses at once and with migrations left for the real start, so it needs
# no database, keys or network. Once it is up, one readiness probe loads what a probe loads
# (Flyway among it; the answer is "down"), then SIGTERM stops it and the JVM writes the archive.
set -euo pipefail
app=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -f "$app/app-cds.jsa"

QUARKUS_DATASOURCE_JDBC_URL=jdbc:postgresql://127.0.0.1:1/none \
  QUARKUS_FLYWAY_MIGRATE_AT_START=false JOBS_LOCK_MODE=none \
  MP_JWT_VERIFY_ISSUER=app-cds JOBS_DATA_DIR="$work/data" \
  QUARKUS_HTTP_HOST=127.0.0.1 QUARKUS_HTTP_PORT=0 \
  java -XX:ArchiveClassesAtExit="$app/app-cds.jsa" -jar "$app/quarkus-run.jar" >"$work/log" 2>&1 &
pid=$!

port=
for _ in $(seq 1 1200); do
  port=$(sed -n 's|.* started in .*Listening on: http://127.0.0.1:\([0-9]*\).*|\1|p' "$work/log")
  if [ -n "$port" ] || ! kill -0 "$pid" 2>/dev/null; then break; fi
  sleep 0.1
done
if [ -z "$port" ]; then
  kill -KILL "$pid" 2>/dev/null || true
  echo "app-cds.sh: the training start did not come up; its log:" >&2
  grep -v '\[cds\]' "$work/log" | tail -n 30 >&2
  exit 1
fi

# One readiness probe, with bash's own /dev/tcp (the runtime image has no curl).
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'GET /q/health/ready HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3
cat <&3 >/dev/null
exec 3>&-

kill -TERM "$pid"
wait "$pid" || true
if [ ! -s "$app/app-cds.jsa" ]; then
  echo "app-cds.sh: no archive was written; the training start's log:" >&2
  grep -v '\[cds\]' "$work/log" | tail -n 30 >&2
  exit 1
fi
