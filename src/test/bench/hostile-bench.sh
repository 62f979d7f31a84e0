#!/usr/bin/env bash
# Hostile-peer benchmark of the data node (issue 23): each attack on the NBD port runs beside an
# honest fio client (4 KiB randread, iodepth 4, its own tenant's volume, connected before the
# attack) and is compared with quiet baselines, one before and one after the attacks. For each
# phase it prints the honest client's IOPS, its ratio to the mean baseline (goal: at least 0.80),
# whether fio saw an error or a disconnect, the node's peak heap in use (jstat, sampled every
# 0.5 s) and peak RSS, and what the attacker saw. Every figure is computed from what this run
# measured.
#
#   mvn -o -q compile && bash src/test/bench/hostile-bench.sh [seconds per phase] [heap MiB]
#   PEERS="nbdkit qemu-nbd" ROUNDS=3 bash src/test/bench/hostile-bench.sh 12
#
# PHASES (space-separated name:attack pairs) runs some phases only, e.g.
# PHASES="baseline1:none bigreads:bigreads baseline2:none"; CLASSES runs the node from another
# directory of compiled classes than target/classes (to compare two builds by turns).
#
# With PEERS, the big-reads attack then runs against each named peer too, by turns with the Weir
# node (ROUNDS rounds, default 2, each server's order rotating): a quiet baseline, the attack, a
# quiet baseline, on each server in turn. The peers serve the honest volume's file as one export,
# to the honest client and the attacker alike (they know no tenants); the honest client's ratio
# to its mean baseline on each server says how much of the loss a server on these cores avoids.
#
# Attacks: an NBD_OPT_LIST flood that never reads; a flood of invalid requests (READ of length 0)
# that never reads; 300 idle connections from one address (its cap is 256), then a newcomer once
# they have been idle 10 s; 50 connections dripping a request header at 1 byte/s; 16 connections
# of 4 pipelined 32 MiB READs, over and over. The node runs from target/classes with -Xmx and
# -XX:MaxDirectMemorySize of the given size (default 512 MiB) and its defaults otherwise.
# Needs fio (nbd engine), python3, jstat; with PEERS, nbdkit and qemu-nbd.
set -euo pipefail
# port, wait_port, weir_port: how the servers' ports are picked and waited for
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../../.."
SECS=${1:-15}
HEAP=${2:-512}
WORK=$(mktemp -d /tmp/weir-hostile.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

# not offline: on a fresh machine the dependency plugin may not be in the local repository yet
mvn -B -ntp -q dependency:build-classpath -Dmdep.outputFile="$WORK/cp.txt" >"$WORK/cp.log" 2>&1 \
  || { cat "$WORK/cp.log" >&2; exit 1; }
CP="${CLASSES:-target/classes}:$(cat "$WORK/cp.txt")"

python3 - "$WORK" <<'PY'
import json, sys
work = sys.argv[1]
pol = {"weight": 100, "minIops": None, "maxIops": None, "burstIops": None, "maxBytesPerSec": None,
       "burstBytesPerSec": None, "costModel": {"minChargeBytes": 4096}}
tenants = [{"id": "00000000-0000-0000-0000-00000000a001", "name": "honest", "weight": 100, "maxIops": None, "maxBytesPerSec": None},
           {"id": "00000000-0000-0000-0000-00000000a002", "name": "evil", "weight": 100, "maxIops": None, "maxBytesPerSec": None}]
vols = [{"id": "00000000-0000-0000-0000-00000000b001", "tenantId": tenants[0]["id"], "name": "vol", "sizeBytes": 256 << 20, "effectivePolicy": pol},
        {"id": "00000000-0000-0000-0000-00000000b002", "tenantId": tenants[1]["id"], "name": "vol", "sizeBytes": 64 << 20, "effectivePolicy": pol}]
json.dump({"nodeId": "00000000-0000-0000-0000-000000000001", "revision": 1, "tasks": [], "tenants": tenants,
           "volumes": vols, "usageReportIntervalSeconds": 10}, open(work + "/config.json", "w"))
PY

java -Xmx${HEAP}m -XX:MaxDirectMemorySize=${HEAP}m -XX:+ExitOnOutOfMemoryError -cp "$CP" io.weir.datanode.DataNodeCommand \
  --config-file "$WORK/config.json" --data-dir "$WORK/data" --listen 127.0.0.1:0 --workers 2 >"$WORK/node.log" 2>&1 &
NODE=$!
pids+=("$NODE")
PORT=$(weir_port "$NODE" "$WORK/node.log" node)
# the honest volume's data, written once so that reads hit real blocks
fio --name=fill --ioengine=nbd --uri="nbd://127.0.0.1:$PORT/honest/vol" --rw=write --bs=1M --size=256M \
  --output="$WORK/fill.txt" >/dev/null

cat >"$WORK/attack.py" <<'PY'
import json, select, socket, struct, sys, threading, time
port, kind, secs = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
EXPORT = sys.argv[4].encode()  # the attacker's export
IHAVEOPT = 0x49484156454F5054
REQ = 0x25609513
out = {}

def connect():
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s

def recvn(s, n):
    b = bytearray()
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise ConnectionError("closed")
        b += c
    return bytes(b)

def go(s, name=EXPORT):
    recvn(s, 18)
    s.sendall(struct.pack(">I", 3))
    data = struct.pack(">I", len(name)) + name + struct.pack(">H", 0)
    s.sendall(struct.pack(">QII", IHAVEOPT, 7, len(data)) + data)
    while True:
        _, _, typ, ln = struct.unpack(">QIII", recvn(s, 20))
        recvn(s, ln)
        if typ == 1:
            return
        if typ & 0x80000000:
            raise ConnectionError("GO refused")

def flood(s, unit):
    """Sends unit over and over, never reading, until secs pass or the node closes; bytes sent, closed."""
    s.setblocking(False)
    buf = unit * (65536 // len(unit))
    sent, end = 0, time.time() + secs
    while time.time() < end:
        try:
            sent += s.send(buf)
        except BlockingIOError:
            select.select([], [s], [], 0.2)
        except OSError:
            return sent, True
    return sent, False

def closed_by_node(s):
    s.setblocking(True)
    s.settimeout(0.5)
    try:
        while True:
            c = s.recv(1 << 16)
            if not c:
                return True
    except socket.timeout:
        return False
    except OSError:
        return True

if kind == "optflood":
    s = connect()
    s.sendall(struct.pack(">I", 3))
    sent, closed = flood(s, struct.pack(">QII", IHAVEOPT, 3, 0))
    out = {"bytesSent": sent, "options": sent // 16, "closedByNode": closed or closed_by_node(s)}
elif kind == "reqflood":
    s = connect()
    go(s)
    sent, closed = flood(s, struct.pack(">IHHQQI", REQ, 0, 0, 1, 0, 0))
    out = {"bytesSent": sent, "requests": sent // 28, "closedByNode": closed or closed_by_node(s)}
elif kind == "idle":
    conns, refused = [], 0
    for _ in range(300):
        try:
            s = connect()
            go(s)
            conns.append(s)
        except (ConnectionError, OSError, struct.error):
            refused += 1
    time.sleep(max(0, secs - 2))  # the attack itself: hold them idle
    try:
        s = connect()
        go(s)
        newcomer = True
        s.close()
    except (ConnectionError, OSError, struct.error):
        newcomer = False
    evicted = sum(1 for c in conns if closed_by_node(c))
    out = {"opened": len(conns), "refused": refused, "newcomerServedAtCap": newcomer, "evicted": evicted}
elif kind == "drip":
    conns = []
    for _ in range(50):
        s = connect()
        go(s)
        conns.append(s)
    hdr = struct.pack(">IHHQQI", REQ, 0, 0, 1, 0, 4096)
    end, i = time.time() + secs, 0
    while time.time() < end and i < len(hdr) - 1:
        for s in conns:
            try:
                s.send(hdr[i:i + 1])
            except OSError:
                pass
        i += 1
        time.sleep(1)  # the attack's own pace: one byte a second
    out = {"connections": len(conns), "closedByNode": sum(1 for s in conns if closed_by_node(s)), "bytesEach": i}
elif kind == "bigreads":
    errors, ok, closed = [0], [0], [0]
    lock = threading.Lock()
    end = time.time() + secs
    def reader():
        try:
            s = connect()
            go(s)
            buf = bytearray(1 << 20)
            while time.time() < end:
                for i in range(4):
                    s.sendall(struct.pack(">IHHQQI", REQ, 0, 0, i, (i % 2) << 25, 1 << 25))
                for _ in range(4):
                    _, err, _ = struct.unpack(">IIQ", recvn(s, 16))
                    if err == 0:
                        left = 1 << 25
                        while left:
                            n = s.recv_into(buf, min(left, len(buf)))
                            if n == 0:
                                raise ConnectionError("closed")
                            left -= n
                    with lock:
                        if err:
                            errors[0] += 1
                        else:
                            ok[0] += 1
        except (ConnectionError, OSError):
            with lock:
                closed[0] += 1
    ts = [threading.Thread(target=reader) for _ in range(16)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    out = {"reads32MiB": ok[0], "errorReplies": errors[0], "connectionsClosed": closed[0]}
print(json.dumps(out))
PY

# The servers the phases can run against (the Weir node; with PEERS, the peers too): NBD port, the
# honest client's and the attacker's export names, and process (for RSS, and jstat's heap when it
# is the Weir node). use_server NAME points the phases at one of them.
declare -A S_PORT=([weir]=$PORT) S_HONEST=([weir]=honest/vol) S_EVIL=([weir]=evil/vol) S_PID=([weir]=$NODE)
use_server() { SPORT=${S_PORT[$1]} SHONEST=${S_HONEST[$1]} SEVIL=${S_EVIL[$1]} SPID=${S_PID[$1]}; }
use_server weir

# phase NAME ATTACK: fio beside the attack (none for a baseline), heap and RSS sampled meanwhile
phase() {
  local name=$1 attack=$2
  fio --name=honest --ioengine=nbd --uri="nbd://127.0.0.1:$SPORT/$SHONEST" --rw=randread --bs=4k --iodepth=4 \
    --size=256M --runtime="$SECS" --time_based --output-format=json --output="$WORK/$name.fio.json" >/dev/null 2>"$WORK/$name.fio.err" &
  local fio=$!
  sleep 1 # fio connects before the attack begins
  local attacker=""
  if [ "$attack" != none ]; then
    python3 "$WORK/attack.py" "$SPORT" "$attack" "$((SECS - 2))" "$SEVIL" >"$WORK/$name.attack.json" 2>"$WORK/$name.attack.err" &
    attacker=$!
  fi
  : >"$WORK/$name.samples"
  while kill -0 "$fio" 2>/dev/null; do
    heap=0
    [ "$SPID" = "$NODE" ] && heap=$(jstat -gc "$NODE" 2>/dev/null | awk 'NR==2 {printf "%.0f", ($3+$4+$6+$8)/1024}')
    rss=$(awk '/VmRSS/ {printf "%.0f", $2/1024}' /proc/"$SPID"/status 2>/dev/null || echo 0)
    echo "${heap:-0} ${rss:-0}" >>"$WORK/$name.samples"
    sleep 0.5
  done
  local fiorc=0
  wait "$fio" || fiorc=$?
  [ -n "$attacker" ] && { wait "$attacker" || true; }
  echo "$fiorc" >"$WORK/$name.fiorc"
}

read -r -a PHASES <<< "${PHASES:-baseline1:none optflood:optflood reqflood:reqflood idle:idle drip:drip bigreads:bigreads baseline2:none}"
for p in "${PHASES[@]}"; do
  phase "${p%%:*}" "${p#*:}"
  kill -0 "$NODE" 2>/dev/null || { echo "the node died during ${p%%:*}:"; tail -30 "$WORK/node.log"; exit 1; }
done

python3 - "$WORK" "$SECS" "$HEAP" "${PHASES[@]}" <<'PY'
import json, sys
work, secs, heap = sys.argv[1], sys.argv[2], sys.argv[3]
names = [p.split(":")[0] for p in sys.argv[4:]]
rows = {}
for n in names:
    try:
        j = json.load(open(f"{work}/{n}.fio.json"))
        job = j["jobs"][0]
        iops, err = job["read"]["iops"], job["error"]
    except (OSError, ValueError, KeyError, IndexError):
        iops, err = 0.0, -1
    rc = int(open(f"{work}/{n}.fiorc").read().strip() or 0)
    samples = [tuple(map(int, l.split())) for l in open(f"{work}/{n}.samples") if l.strip()]
    try:
        attack = open(f"{work}/{n}.attack.json").read().strip()
    except OSError:
        attack = ""
    rows[n] = (iops, err, rc, max((s[0] for s in samples), default=0), max((s[1] for s in samples), default=0), attack)
base = (rows["baseline1"][0] + rows["baseline2"][0]) / 2
print(f"honest fio: 4 KiB randread iodepth 4, {secs} s per phase; node -Xmx{heap}m -XX:MaxDirectMemorySize={heap}m")
print(f"baseline: mean of {rows['baseline1'][0]:.0f} and {rows['baseline2'][0]:.0f} = {base:.0f} IOPS")
print(f"{'phase':<10} {'IOPS':>8} {'vs base':>8} {'goal':>5} {'fio err':>8} {'heap MiB':>9} {'RSS MiB':>8}  attacker saw")
for n in names:
    iops, err, rc, h, r, attack = rows[n]
    ratio = iops / base if base else 0
    ok = "ok" if ratio >= 0.8 and err == 0 and rc == 0 else "MISS"
    print(f"{n:<10} {iops:>8.0f} {ratio:>8.2f} {ok:>5} {err if rc == 0 else 'rc=%d' % rc:>8} {h:>9} {r:>8}  {attack}")
PY
grep -c "OutOfMemoryError" "$WORK/node.log" | sed 's/^/OutOfMemoryError lines in the node log: /' || true

[ -n "${PEERS:-}" ] || exit 0
# The big-reads attack against the peers, by turns with the Weir node.
FILE="$WORK/data/00000000-0000-0000-0000-00000000b001.img"
SERVERS=(weir)
for peer in $PEERS; do
  p=$(port)
  case $peer in
    nbdkit) nbdkit -f -r -i 127.0.0.1 -p "$p" file file="$FILE" >"$WORK/$peer.log" 2>&1 &
            S_HONEST[$peer]="" S_EVIL[$peer]="" ;;
    qemu-nbd) qemu-nbd -f raw -r -x vol -b 127.0.0.1 -p "$p" -t -e 64 "$FILE" >"$WORK/$peer.log" 2>&1 &
              S_HONEST[$peer]=vol S_EVIL[$peer]=vol ;;
    *) echo "unknown peer $peer (nbdkit, qemu-nbd)" >&2; exit 2 ;;
  esac
  S_PID[$peer]=$! S_PORT[$peer]=$p
  pids+=("$!")
  SERVERS+=("$peer")
  wait_port "$p" "${S_PID[$peer]}" "$WORK/$peer.log" "$peer"
done
ROUNDS=${ROUNDS:-2}
for r in $(seq "$ROUNDS"); do
  n=${#SERVERS[@]}
  for s in "${SERVERS[@]:$(( (r - 1) % n ))}" "${SERVERS[@]:0:$(( (r - 1) % n ))}"; do
    use_server "$s"
    phase "peer-$s-$r-base1" none
    phase "peer-$s-$r-big" bigreads
    phase "peer-$s-$r-base2" none
  done
done
python3 - "$WORK" "$ROUNDS" "${SERVERS[@]}" <<'PY'
import json, statistics, sys
work, rounds, servers = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def iops(name):
    try:
        job = json.load(open(f"{work}/{name}.fio.json"))["jobs"][0]
        ok = job["error"] == 0 and open(f"{work}/{name}.fiorc").read().strip() == "0"
        return job["read"]["iops"], ok
    except (OSError, ValueError, KeyError, IndexError):
        return 0.0, False
print(f"\nbig reads by turns, {rounds} rounds: the honest client's IOPS beside the attack over the mean of"
      " the quiet baselines around it")
print(f"{'server':<10} {'median':>7}  rounds (base1 / attack / base2 IOPS; reads of 32 MiB served; fio ok)")
for s in servers:
    ratios, cells = [], []
    for r in range(1, rounds + 1):
        p = f"peer-{s}-{r}"
        (b1, ok1), (a, oka), (b2, ok2) = iops(p + "-base1"), iops(p + "-big"), iops(p + "-base2")
        ratio = a / ((b1 + b2) / 2) if b1 + b2 else 0
        ratios.append(ratio)
        try:
            served = json.loads(open(f"{work}/{p}-big.attack.json").read())["reads32MiB"]
        except (OSError, ValueError, KeyError):
            served = "?"
        cells.append(f"{ratio:.2f} ({b1:.0f} / {a:.0f} / {b2:.0f}; {served}; {'ok' if ok1 and oka and ok2 else 'ERROR'})")
    print(f"{s:<10} {statistics.median(ratios):>7.2f}  " + ", ".join(cells))
PY
