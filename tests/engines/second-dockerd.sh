#!/usr/bin/env bash
# A second Docker engine for the engine-pool test, reached over TCP with TLS from inside a
# network namespace of its own (only loopback and namespaces we create are reachable here).
#
#   second-dockerd.sh start DIR IMAGE   # prints the engine's URL (tcp://10.251.0.2:2376)
#   second-dockerd.sh stop DIR
#
# DIR holds the certificates (a throwaway CA, the server's and the client's), the engine's
# data and its log. IMAGE is copied from the first engine ($DOCKER_HOST) with save | load.
# Needs root, iproute2, openssl and dockerd. The client certificates are in DIR/client, the
# directory DOCKER_CERT_PATH must name.
set -euo pipefail
cmd="$1"; dir="$2"
# Fixed names: one such engine at a time; a start first clears what a killed run left.
ns=zerorepo-pool; veth_host=zrpool-h; veth_engine=zrpool-e
host_ip=10.251.0.1; engine_ip=10.251.0.2; port=2376

stop() {
  local pid
  pid="$(cat "$dir/docker.pid" 2>/dev/null || true)"
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$dir/docker.pid"
  fi
  ip netns del "$ns" 2>/dev/null || true
  ip link del "$veth_host" 2>/dev/null || true
}

certs() {
  mkdir -p "$dir/ca" "$dir/server" "$dir/client"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=zerorepo test CA" \
    -keyout "$dir/ca/key.pem" -out "$dir/ca/ca.pem" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$engine_ip" \
    -keyout "$dir/server/key.pem" -out "$dir/server/req.pem" 2>/dev/null
  printf 'subjectAltName=IP:%s\nextendedKeyUsage=serverAuth\n' "$engine_ip" > "$dir/server/ext.cnf"
  openssl x509 -req -in "$dir/server/req.pem" -CA "$dir/ca/ca.pem" -CAkey "$dir/ca/key.pem" \
    -CAcreateserial -days 2 -extfile "$dir/server/ext.cnf" -out "$dir/server/cert.pem" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=client" \
    -keyout "$dir/client/key.pem" -out "$dir/client/req.pem" 2>/dev/null
  printf 'extendedKeyUsage=clientAuth\n' > "$dir/client/ext.cnf"
  openssl x509 -req -in "$dir/client/req.pem" -CA "$dir/ca/ca.pem" -CAkey "$dir/ca/key.pem" \
    -CAcreateserial -days 2 -extfile "$dir/client/ext.cnf" -out "$dir/client/cert.pem" 2>/dev/null
  cp "$dir/ca/ca.pem" "$dir/client/ca.pem"
}

start() {
  local image="$3"
  mkdir -p "$dir"
  ip netns del "$ns" 2>/dev/null || true
  ip link del "$veth_host" 2>/dev/null || true
  certs
  ip netns add "$ns"
  ip link add "$veth_host" type veth peer name "$veth_engine"
  ip link set "$veth_engine" netns "$ns"
  ip addr add "$host_ip/30" dev "$veth_host"; ip link set "$veth_host" up
  ip netns exec "$ns" ip addr add "$engine_ip/30" dev "$veth_engine"
  ip netns exec "$ns" ip link set "$veth_engine" up
  ip netns exec "$ns" ip link set lo up
  # nsenter, not `ip netns exec`: that remounts /sys, hiding the cgroup mounts dockerd needs.
  nohup nsenter --net="/var/run/netns/$ns" dockerd --data-root "$dir/data" --exec-root "$dir/exec" \
    --pidfile "$dir/docker.pid" -H "unix://$dir/docker.sock" \
    -H "tcp://$engine_ip:$port" --tlsverify --tlscacert "$dir/ca/ca.pem" \
    --tlscert "$dir/server/cert.pem" --tlskey "$dir/server/key.pem" \
    --iptables=false --ip-masq=false --bridge=none --storage-driver=overlay2 \
    >"$dir/dockerd.log" 2>&1 </dev/null &
  local url="tcp://$engine_ip:$port"
  for _ in $(seq 1 120); do
    if DOCKER_HOST="$url" DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH="$dir/client" docker info >/dev/null 2>&1; then
      # The image comes from the first engine: there is no registry to pull from.
      docker save "$image" | DOCKER_HOST="$url" DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH="$dir/client" docker load >/dev/null
      echo "$url"
      return 0
    fi
    sleep 0.5
  done
  echo "the second dockerd did not come up:" >&2; tail -n 20 "$dir/dockerd.log" >&2
  stop; return 1
}

case "$cmd" in
  start) start "$@" ;;
  stop) stop ;;
  *) echo "usage: $0 start DIR IMAGE | stop DIR" >&2; exit 2 ;;
esac
