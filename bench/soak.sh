#!/usr/bin/env bash
# A bounded soak run of the real gateway jar under mixed load with injected upstream faults.
# Not part of CI. Usage: bench/soak.sh [--quick | --duration 3m] [--concurrency 16]
# See docs/operations-soak.md.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ -z "${JAVA_HOME:-}" && -d /usr/lib/jvm/temurin-25-jdk-amd64 ]]; then
  export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
fi
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"

jar=gateway-app/target/spillway.jar
if [[ ! -f "$jar" || "${SOAK_REBUILD:-}" == 1 ]]; then
  echo "soak: building $jar"
  ./mvnw -B -q -DskipTests package -pl gateway-app -am
fi

exec "$JAVA" bench/soak/Soak.java --jar "$jar" "$@"
