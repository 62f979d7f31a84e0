# Helpers shared by the NBD benchmark scripts (sourced, not run).
#
# Ports. The Weir nodes bind port 0 and print the port they got (after applying their config),
# so nothing can take it between picking and binding. qemu-nbd and nbdkit need a port named in
# advance: it is picked below the kernel's ephemeral range (ip_local_port_range, 32768+ here), so
# no outgoing connection or bind(0) elsewhere on the machine can take it meanwhile, and a server
# that exits (port taken after all, bad arguments, a node refusing its config) fails the run at
# once with its log, instead of a bare "port N not up" after the timeout.
port() { python3 -c '
import random, socket
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
while True:
    p = random.randrange(20000, low)
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p)); print(p); break
    except OSError:
        pass
    finally:
        s.close()
'; }
died() { echo "$1 (pid $2) exited; its log:" >&2; tail -20 "$3" >&2; exit 1; }
# wait_port PORT PID LOG NAME
wait_port() {
  for _ in $(seq 1200); do
    (echo > /dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0
    kill -0 "$2" 2>/dev/null || died "$4" "$2" "$3"
    sleep 0.1
  done
  echo "$4: port $1 not up after 120 s; its log:" >&2; tail -20 "$3" >&2; exit 1
}
# wait_log PID LOG SED-PATTERN NAME: the first capture of the pattern in the log, once it is there
wait_log() {
  for _ in $(seq 1200); do
    p=$(sed -n "$3" "$2" 2>/dev/null | head -1 || true)
    [ -n "$p" ] && { echo "$p"; return 0; }
    kill -0 "$1" 2>/dev/null || died "$4" "$1" "$2"
    sleep 0.1
  done
  echo "$4: not in its log after 120 s; its log:" >&2; tail -20 "$2" >&2; exit 1
}
# weir_port PID LOG NAME: the port a Weir node printed once it serves its config
weir_port() { wait_log "$1" "$2" 's/.*serving NBD on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$3"; }
# build_jar REV DEST: packages revision REV of this repository (a clone in a temporary directory
# beside DEST) and copies its data node jar to DEST; a commit already built there is not built again
build_jar() {
  local src sha cached
  sha=$(git rev-parse "$1^{commit}")
  cached=$(dirname "$2")/jar-$sha
  if [ -f "$cached" ]; then
    echo "$(basename "$2") is $(git rev-parse --short "$sha"), built already"
    cp "$cached" "$2"
    return
  fi
  src=$(mktemp -d "$(dirname "$2")/src.XXXXXX")
  git clone -q "$(git rev-parse --show-toplevel)" "$src"
  git -C "$src" checkout -q "$1"
  echo "building $(basename "$2") ($(git -C "$src" rev-parse --short HEAD))"
  (cd "$src" && mvn -B -ntp -q package -DskipTests > "$2.build.log" 2>&1) || { tail -20 "$2.build.log"; exit 1; }
  cp "$(ls "$src"/target/weir-*.jar | grep -v -- -agent | head -1)" "$cached"
  cp "$cached" "$2"
  rm -rf "$src"
}
