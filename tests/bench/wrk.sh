#!/usr/bin/env bash
# Boot time (cold compile, then cached) and the cost of a trivial mod route against raw hyper and
# `wasmtime serve` (wasmtime-cli 48 on a trivial `wasi:http` component, `tests/bench/wasi-hello`), driven
# by wrk with the same threads and connections, in one run. Servers alternate (A B C D E, then
# E D C B A, ...) and the table gives the median and min-max over REPS repetitions, with server CPU per
# request from /proc/<pid>/stat, and the ratios: req/s against raw hyper, and modhost's req/s against
# `wasmtime serve`'s in the same mode (fresh instance per request; reuse). Run through `make bench-wrk`
# (builds everything first).
#
#   DUR=10 CONNS=32 THREADS=2 REPS=3 bash tests/bench/wrk.sh
#
# wasmtime-cli is installed with cargo into target/tools the first time (a long build: 10-30 minutes
# on two cores), then reused. WASMTIME=none leaves it out; WASMTIME=/path/to/wasmtime uses that one.
set -euo pipefail
cd "$(dirname "$0")/../.."
DUR=${DUR:-10} CONNS=${CONNS:-32} THREADS=${THREADS:-2} REPS=${REPS:-3}
MODHOST=${MODHOST:-target/release/modhost}
HELLO=target/release/hyper-hello
FIXTURE=target/wasm-guests/wasm32-wasip2/release/fixture_guest.wasm
WASMTIME=${WASMTIME:-target/tools/bin/wasmtime}
WASI_HELLO=target/wasi-hello/wasm32-wasip2/release/wasi_hello.wasm
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)"; exit 1; }
for f in "$MODHOST" "$HELLO" "$FIXTURE"; do [ -e "$f" ] || { echo "missing $f: run make bench-wrk"; exit 1; }; done
if [ "$WASMTIME" != none ]; then
  if [ ! -x "$WASMTIME" ] && [ "$WASMTIME" = target/tools/bin/wasmtime ]; then
    echo "== installing wasmtime-cli 48 into target/tools (once; WASMTIME=none skips it)"
    cargo install wasmtime-cli --version '^48' --locked --root target/tools
  fi
  "$WASMTIME" --version | grep -q '^wasmtime 48\.' || { echo "$WASMTIME is not wasmtime 48: $("$WASMTIME" --version)"; exit 1; }
  # Built only for wasm32-wasip2, by its own manifest: the main workspace never compiles it.
  cargo build -q --release --target wasm32-wasip2 --manifest-path tests/bench/wasi-hello/Cargo.toml --target-dir target/wasi-hello
fi

work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
tick=$(getconf CLK_TCK)

# start NAME CMD...: runs CMD with its log in $work/NAME.log, waits for `listening on`, sets PID and PORT.
start() {
  local name=$1; shift
  "$@" >"$work/$name.log" 2>&1 &
  PID=$!; pids+=("$PID")
  for _ in $(seq 1 6000); do
    # modhost and hyper-hello say `listening on 127.0.0.1:P`, wasmtime serve `Serving HTTP on http://127.0.0.1:P/`.
    PORT=$(grep -Eo '(listening on |http://)127.0.0.1:[0-9]*' "$work/$name.log" | head -1 | cut -d: -f2- | grep -o '[0-9]*$' || true)
    [ -n "$PORT" ] && return 0
    sleep 0.005
  done
  echo "$name did not start:"; cat "$work/$name.log"; exit 1
}
stop() { kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

install_fixture() { # root reuse
  mkdir -p "$1/mods/fx"
  printf 'id = "fx"\nversion = "0.1.0"\nreuse = %s\n' "$2" >"$1/mods/fx/mod.toml"
  cp "$FIXTURE" "$1/mods/fx/fx.wasm"
}

echo "== boot: modhost serve on an empty root (compiles the built-in emulator), then again (cached)"
for attempt in cold cached; do
  t0=$(date +%s%N)
  start "boot-$attempt" "$MODHOST" serve --root "$work/boot" --port 0
  t1=$(date +%s%N)
  # The listener opens before the mods load; the boot ends when the server says it is ready.
  for _ in $(seq 1 6000); do grep -q 'ready: serving' "$work/boot-$attempt.log" && break; sleep 0.005; done
  t2=$(date +%s%N)
  stop
  echo "  $attempt: listening after $(( (t1 - t0) / 1000000 )) ms, ready after $(( (t2 - t0) / 1000000 )) ms ($(grep -o 'booted in [0-9]* ms' "$work/boot-$attempt.log"))"
done

install_fixture "$work/fresh" 1
install_fixture "$work/reuse" 100000
URL_PATH=/fx/p/x

# run_one NAME: wrk against the server in PID/PORT; appends "rps cpu_us_per_req" to $work/NAME.results.
run_one() {
  local name=$1
  wrk -t"$THREADS" -c"$CONNS" -d2s -H 'Accept-Encoding: identity' "http://127.0.0.1:$PORT$URL_PATH" >/dev/null
  local c0; c0=$(cpu_ticks "$PID")
  wrk -t"$THREADS" -c"$CONNS" -d"${DUR}s" -H 'Accept-Encoding: identity' "http://127.0.0.1:$PORT$URL_PATH" >"$work/$name.wrk"
  local c1; c1=$(cpu_ticks "$PID")
  local reqs rps errs
  reqs=$(awk '/requests in/ {print $1}' "$work/$name.wrk")
  rps=$(awk '/Requests\/sec/ {print $2}' "$work/$name.wrk")
  errs=$(grep -c 'Non-2xx\|Socket errors' "$work/$name.wrk" || true)
  [ "$errs" = 0 ] || { echo "$name had errors:"; cat "$work/$name.wrk"; exit 1; }
  echo "$rps $(awk -v c=$((c1 - c0)) -v t="$tick" -v n="$reqs" 'BEGIN {printf "%.1f", c / t / n * 1e6}')" >>"$work/$name.results"
}

names=(hyper fresh reuse)
[ "$WASMTIME" != none ] && names+=(wt-fresh wt-reuse)
launch() {
  case $1 in
    hyper) start hyper "$HELLO" 0 ;;
    fresh) start fresh "$MODHOST" serve --root "$work/fresh" --port 0 ;;
    reuse) start reuse "$MODHOST" serve --root "$work/reuse" --port 0 ;;
    # -Scli: a Rust std component imports wasi:cli beside the proxy world.
    wt-fresh) start wt-fresh "$WASMTIME" serve -Scli --addr 127.0.0.1:0 "$WASI_HELLO" ;;
    wt-reuse) start wt-reuse "$WASMTIME" serve -Scli --addr 127.0.0.1:0 --max-instance-reuse-count 100000 "$WASI_HELLO" ;;
  esac
}
echo "== wrk -t$THREADS -c$CONNS -d${DUR}s GET $URL_PATH (identity), $REPS repetitions, order flipped each time"
for rep in $(seq 1 "$REPS"); do
  order=("${names[@]}")
  if (( rep % 2 == 0 )); then order=(); for (( i=${#names[@]}-1; i>=0; i-- )); do order+=("${names[$i]}"); done; fi
  for name in "${order[@]}"; do launch "$name"; run_one "$name"; stop; done
done

median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%s (%s-%s)", m, a[1], a[NR]}'; }
printf '\n%-32s %-28s %-24s %s\n' "server" "req/s median (min-max)" "CPU us/req median" "req/s vs hyper"
hyper_rps=$(cut -d' ' -f1 "$work/hyper.results" | sort -n | awk '{a[NR]=$1} END {print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}')
for name in "${names[@]}"; do
  label=$name
  case $name in
    hyper) label="raw hyper hello";; fresh) label="modhost, fresh instance/request";; reuse) label="modhost, reuse = 100000";;
    wt-fresh) label="wasmtime serve, fresh";; wt-reuse) label="wasmtime serve, reuse 100000";;
  esac
  rps=$(cut -d' ' -f1 "$work/$name.results" | median)
  cpu=$(cut -d' ' -f2 "$work/$name.results" | median)
  med=$(cut -d' ' -f1 "$work/$name.results" | sort -n | awk '{a[NR]=$1} END {print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}')
  printf '%-32s %-28s %-24s %.2f\n' "$label" "$rps" "$cpu" "$(awk -v a="$med" -v b="$hyper_rps" 'BEGIN {print a / b}')"
done
if [ "$WASMTIME" != none ]; then
  med_rps() { cut -d' ' -f1 "$work/$1.results" | sort -n | awk '{a[NR]=$1} END {print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
  echo
  for mode in fresh reuse; do
    printf 'modhost vs wasmtime serve, %-5s: %.2fx the req/s (target: >= 2x)\n' "$mode" \
      "$(awk -v a="$(med_rps "$mode")" -v b="$(med_rps "wt-$mode")" 'BEGIN {print a / b}')"
  done
fi
