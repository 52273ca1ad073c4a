#!/usr/bin/env bash
# The topology of docker-compose.yml on this machine, without Docker: two `turinglab serve`
# processes on PostgreSQL + Redis behind nginx with TLS (a self-signed certificate made here).
#
#   deploy/local-topology.sh [CONFIG]      # default: configs/arena_study.yaml
#
# Runs in the foreground until Ctrl-C (or SIGTERM), then stops everything it started.
# Settings (environment):
#   TLS_PORT      where nginx listens with TLS                (8443)
#   ARENA_PORTS   the two arena processes' ports               ("8101 8102")
#   STORE         PostgreSQL URL (the database must exist)     (postgresql://postgres@127.0.0.1:5432/turinglab_deploy, created if missing)
#   REDIS         Redis URL; keep it off db 0 of a shared Redis (redis://127.0.0.1:6379/1)
#   WORKDIR       certificate, nginx config and logs           (a new temporary folder)
#   TURINGLAB_ADMIN_PASSWORD, TURINGLAB_ARENA_SECRET            (generated when unset; printed)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
config="${1:-$root/configs/arena_study.yaml}"
tls_port="${TLS_PORT:-8443}"
read -r -a ports <<< "${ARENA_PORTS:-8101 8102}"
store="${STORE:-postgresql://postgres@127.0.0.1:5432/turinglab_deploy}"
redis="${REDIS:-redis://127.0.0.1:6379/1}"
work="${WORKDIR:-$(mktemp -d -t turinglab-deploy-XXXXXX)}"
turinglab="${TURINGLAB:-turinglab}"
mkdir -p "$work"

for tool in openssl nginx envsubst curl "$turinglab"; do
  command -v "$tool" >/dev/null || { echo "error: $tool is not installed (deploy/README.md)" >&2; exit 1; }
done
if [[ -z "${STORE:-}" ]]; then  # the default database: made on first use
  createdb -h 127.0.0.1 -U postgres turinglab_deploy 2>/dev/null || true
fi
export TURINGLAB_ADMIN_PASSWORD="${TURINGLAB_ADMIN_PASSWORD:-$(openssl rand -hex 12)}"
export TURINGLAB_ARENA_SECRET="${TURINGLAB_ARENA_SECRET:-$(openssl rand -hex 32)}"

# 1. A self-signed certificate for localhost and 127.0.0.1 (a real host uses its own).
openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=localhost" \
  -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
  -keyout "$work/arena.key" -out "$work/arena.crt" 2>/dev/null

pids=()
stop() {
  trap - EXIT INT TERM
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap stop EXIT
trap 'exit 0' INT TERM

# 2. Two arena processes, trusting forwarded headers from the local proxy only.
for port in "${ports[@]}"; do
  "$turinglab" serve "$config" --host 127.0.0.1 --port "$port" --store "$store" \
    --redis "$redis" --proxy-headers --forwarded-allow-ips 127.0.0.1 \
    >"$work/arena-$port.log" 2>&1 &
  pids+=($!)
done
for port in "${ports[@]}"; do
  for _ in $(seq 1 600); do
    curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
    for pid in "${pids[@]}"; do
      kill -0 "$pid" 2>/dev/null || { echo "error: an arena process died; see $work/arena-*.log" >&2; cat "$work"/arena-*.log >&2; exit 1; }
    done
    sleep 0.2
  done
done

# 3. nginx with TLS in front of both (the same server block docker-compose.yml uses).
ARENA_1="127.0.0.1:${ports[0]}" ARENA_2="127.0.0.1:${ports[1]}" TLS_PORT="$tls_port" \
  SERVER_NAME=localhost CERT_DIR="$work" \
  envsubst '${ARENA_1} ${ARENA_2} ${TLS_PORT} ${SERVER_NAME} ${CERT_DIR}' \
  <"$here/nginx/arena.conf.template" >"$work/arena.conf"
cat >"$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/nginx-error.log warn;
events { worker_connections 4096; }
http {
    access_log $work/nginx-access.log;
    client_body_temp_path $work/nginx-body;
    proxy_temp_path $work/nginx-proxy;
    fastcgi_temp_path $work/nginx-fastcgi;
    uwsgi_temp_path $work/nginx-uwsgi;
    scgi_temp_path $work/nginx-scgi;
    include $work/arena.conf;
}
CONF
nginx -c "$work/nginx.conf" -p "$work" -g 'daemon off;' &
pids+=($!)
for _ in $(seq 1 300); do
  curl -fsS --cacert "$work/arena.crt" "https://127.0.0.1:$tls_port/healthz" >/dev/null 2>&1 && break
  sleep 0.1
done

echo "ready: https://127.0.0.1:$tls_port/  (certificate $work/arena.crt)"
echo "admin: https://127.0.0.1:$tls_port/admin  password: $TURINGLAB_ADMIN_PASSWORD"
echo "arena processes: ${ports[*]} · store $store · redis $redis · logs in $work"
wait -n "${pids[@]}" || true
echo "a process of the topology ended; stopping the rest" >&2
exit 1
