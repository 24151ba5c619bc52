#!/usr/bin/env bash
# A real single-node Apache Kafka 4.x (KRaft: broker and controller in one JVM) on 127.0.0.1,
# resolved from Maven Central with deploy/kafka/pom.xml. No Docker, nothing installed by hand:
# Java 17+ and Maven 3.8+ on PATH are enough.
#
#   deploy/kafka/kafka.sh fetch     copy the broker's jars and Kafka's console tools (kafka-tools)
#                                   into the cache (once per pom.xml); `ctxpress kafka tool` runs them
#   deploy/kafka/kafka.sh start     fetch if needed, write server.properties, format, start, wait
#   deploy/kafka/kafka.sh stop      SIGTERM, wait up to 30 s, then SIGKILL
#   deploy/kafka/kafka.sh status    "running ..." (exit 0) or "stopped" (exit 3)
#   deploy/kafka/kafka.sh logs [-f] [-n N]   the broker's server.log
#
# Environment:
#   CTXPRESS_KAFKA_HOME             cache folder (default: <repo>/.cache/kafka)
#   CTXPRESS_KAFKA_PORT             client port (default: the port of CTXPRESS_KAFKA_BOOTSTRAP when
#                                   that is one 127.0.0.1/localhost address, else the port of the
#                                   broker already running from this cache, else 19092)
#   CTXPRESS_KAFKA_BOOTSTRAP        what every ctxpress command talks to; start refuses to start a
#                                   broker the commands would not reach (workers/core/localkafka.py)
#   CTXPRESS_KAFKA_CONTROLLER_PORT  KRaft controller port (default: 19093)
#   CTXPRESS_KAFKA_HEAP_OPTS        JVM heap flags (default: -Xmx512m -Xms256m)
#   CTXPRESS_KAFKA_START_TIMEOUT    seconds start waits for readiness (default: 90)
#   JAVA, MVN                       java and mvn executables (default: from PATH)
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$SCRIPT_DIR/../.." && pwd)"
POM="$SCRIPT_DIR/pom.xml"
LOG4J_CONFIG="$SCRIPT_DIR/log4j2.properties"

CACHE="${CTXPRESS_KAFKA_HOME:-$REPO/.cache/kafka}"
PORT="${CTXPRESS_KAFKA_PORT:-}"
ENV_BOOTSTRAP="${CTXPRESS_KAFKA_BOOTSTRAP:-}"
CPORT="${CTXPRESS_KAFKA_CONTROLLER_PORT:-19093}"
HEAP_OPTS="${CTXPRESS_KAFKA_HEAP_OPTS:--Xmx512m -Xms256m}"
START_TIMEOUT="${CTXPRESS_KAFKA_START_TIMEOUT:-90}"
STOP_TIMEOUT=30
JAVA="${JAVA:-java}"
MVN="${MVN:-mvn}"

JARS="$CACHE/jars"
STAMP="$CACHE/jars.stamp"
DATA="$CACHE/data"
LOG_DIRS="$DATA/kraft-combined-logs"
SERVER_LOG="$DATA/server.log"
CONSOLE_LOG="$DATA/console.out"
PROPS="$CACHE/server.properties"
CLUSTER_ID_FILE="$CACHE/cluster.id"
PID_FILE="$CACHE/kafka.pid"
BOOTSTRAP_FILE="$CACHE/kafka.bootstrap"  # bootstrap of the running broker (ports may differ from env)
LOCK_FILE="$CACHE/.lock"

say() { printf 'kafka.sh: %s\n' "$*"; }
die() { printf 'kafka.sh: error: %s\n' "$*" >&2; exit 1; }

now_ms() { date +%s%3N; }
# elapsed START_MS -> "1.234 s"
elapsed() { local ms=$(( $(now_ms) - $1 )); printf '%d.%03d s' $((ms / 1000)) $((ms % 1000)); }

# Serialise fetch/start/stop between concurrent callers (parallel test sessions, two shells).
# The broker itself must not inherit the lock's descriptor: see `9>&-` in do_start.
take_lock() {
    mkdir -p "$CACHE"
    exec 9>"$LOCK_FILE"
    if ! flock -w 300 9; then
        die "another kafka.sh holds $LOCK_FILE for more than 300 s; is a fetch or start hanging?"
    fi
}

require() {
    command -v "$1" >/dev/null 2>&1 || die "$1 not found on PATH: $2"
}

port_open() {  # port_open PORT -> 0 when something accepts TCP connections on 127.0.0.1:PORT
    timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}

read_pid() {
    [[ -f "$PID_FILE" ]] || return 1
    local pid
    pid="$(tr -dc '0-9' <"$PID_FILE")"
    [[ -n "$pid" ]] || return 1
    printf '%s' "$pid"
}

# Alive and really our broker (not a recycled pid): its command line names our server.properties.
pid_is_broker() {
    local pid="$1" args
    kill -0 "$pid" 2>/dev/null || return 1
    # -ww: never cut the command line to the terminal width (COLUMNS=80 under pytest would).
    if [[ -r "/proc/$pid/cmdline" ]]; then
        args="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null || true)"
    else
        args="$(ps -ww -p "$pid" -o args= 2>/dev/null || true)"
    fi
    [[ "$args" == *kafka.Kafka* && "$args" == *"$PROPS"* ]]
}

running_bootstrap() {
    if [[ -s "$BOOTSTRAP_FILE" ]]; then
        tr -d '[:space:]' <"$BOOTSTRAP_FILE"
    else
        printf '%s' "$BOOTSTRAP"
    fi
}

# The one bootstrap rule (the same as workers/core/localkafka.py): CTXPRESS_KAFKA_PORT, else the
# port of a loopback CTXPRESS_KAFKA_BOOTSTRAP, else the running broker's, else 19092.
resolve_port() {
    local pid running
    if [[ -n "$PORT" ]]; then
        return 0
    fi
    if [[ -n "$ENV_BOOTSTRAP" ]]; then
        if [[ "$ENV_BOOTSTRAP" =~ ^(127\.0\.0\.1|localhost):([0-9]+)$ ]]; then
            PORT="${BASH_REMATCH[2]}"
            return 0
        fi
        return 1  # another cluster: nothing local to start
    fi
    if pid="$(read_pid)" && pid_is_broker "$pid" && [[ -s "$BOOTSTRAP_FILE" ]]; then
        running="$(tr -d '[:space:]' <"$BOOTSTRAP_FILE")"
        PORT="${running##*:}"
        return 0
    fi
    PORT=19092
}

pom_hash() {
    sha256sum "$POM" | cut -d' ' -f1
}

do_fetch() {
    local want t0
    want="$(pom_hash)"
    if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$want" && -d "$JARS" ]]; then
        say "fetch: jars already in $JARS (pom.xml unchanged), skipping"
        return 0
    fi
    require "$MVN" "install Maven 3.8+ (it resolves the broker's jars from Maven Central)"
    say "fetch: resolving Apache Kafka from Maven Central into $JARS ..."
    t0="$(now_ms)"
    local tmp="$CACHE/jars.tmp.$$"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    # Maven's output goes to a file (Debian's Maven prints colour codes even with -q -B) and is
    # shown only when it fails.
    if ! "$MVN" -q -B -Dstyle.color=never -f "$POM" dependency:copy-dependencies \
        -DincludeScope=runtime -DoutputDirectory="$tmp" >"$CACHE/fetch.log" 2>&1; then
        rm -rf "$tmp"
        tail -n 40 "$CACHE/fetch.log" >&2
        die "Maven could not resolve deploy/kafka/pom.xml; check that Maven Central is reachable (proxy settings in ~/.m2/settings.xml) and run 'deploy/kafka/kafka.sh fetch' again"
    fi
    if ! compgen -G "$tmp/kafka_2.13-*.jar" >/dev/null; then
        rm -rf "$tmp"
        die "Maven finished but no kafka_2.13 jar was copied; check deploy/kafka/pom.xml"
    fi
    if ! compgen -G "$tmp/kafka-tools-[0-9]*.jar" >/dev/null; then
        rm -rf "$tmp"
        die "Maven finished but no kafka-tools jar was copied; check deploy/kafka/pom.xml"
    fi
    # Swap atomically so a changed pom never leaves old and new jars mixed on the class path.
    rm -rf "$JARS"
    mv "$tmp" "$JARS"
    printf '%s\n' "$want" >"$STAMP"
    say "fetch: $(find "$JARS" -name '*.jar' | wc -l) jars in $(elapsed "$t0")"
}

# CTXPRESS_MAX_MESSAGE_BYTES, as workers/core/settings.py derives it (0 or unset:
# CTXPRESS_MAX_RECORD_BYTES + 1 MiB): the broker accepts every record the worker may write.
max_message_bytes() {
    local record="${CTXPRESS_MAX_RECORD_BYTES:-16777216}" message="${CTXPRESS_MAX_MESSAGE_BYTES:-0}"
    if [[ "$message" == 0 ]]; then message=$(( record + 1048576 )); fi
    printf '%s\n' "$message"
}

write_properties() {
    mkdir -p "$LOG_DIRS"
    cat >"$PROPS" <<EOF
# Written by deploy/kafka/kafka.sh on every start; edit the script, not this file.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$CPORT
listeners=PLAINTEXT://127.0.0.1:$PORT,CONTROLLER://127.0.0.1:$CPORT
advertised.listeners=PLAINTEXT://127.0.0.1:$PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$LOG_DIRS
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
auto.create.topics.enable=false
offsets.topic.replication.factor=1
offsets.topic.min.isr=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
message.max.bytes=$(max_message_bytes)
EOF
}

format_storage() {
    local cp="$1" cluster_id
    if [[ -s "$CLUSTER_ID_FILE" ]]; then
        cluster_id="$(cat "$CLUSTER_ID_FILE")"
    else
        cluster_id="$("$JAVA" -Dlog4j2.configurationFile="$LOG4J_CONFIG" -Dkafka.logs.dir="$DATA" \
            -cp "$cp" kafka.tools.StorageTool random-uuid)"
        printf '%s\n' "$cluster_id" >"$CLUSTER_ID_FILE"
    fi
    if [[ -f "$LOG_DIRS/meta.properties" ]]; then
        return 0  # formatted by an earlier start (saves a JVM launch)
    fi
    # --ignore-formatted: a directory formatted by an earlier start is left as it is.
    "$JAVA" -Dlog4j2.configurationFile="$LOG4J_CONFIG" -Dkafka.logs.dir="$DATA" -cp "$cp" \
        kafka.tools.StorageTool format -t "$cluster_id" -c "$PROPS" --ignore-formatted \
        >"$DATA/format.out" 2>&1 || {
        cat "$DATA/format.out" >&2
        die "formatting $LOG_DIRS failed (output above). If the data is disposable, run 'deploy/kafka/kafka.sh stop' and 'rm -rf $DATA $CLUSTER_ID_FILE', then start again"
    }
}

show_failure() {  # show_failure LOG_OFFSET SENTENCE: the log lines written by this start only
    local offset="$1" sentence="$2"
    printf 'kafka.sh: error: broker did not become ready\n' >&2
    if [[ -s "$CONSOLE_LOG" ]]; then
        printf -- '--- last 40 lines of %s ---\n' "$CONSOLE_LOG" >&2
        tail -n 40 "$CONSOLE_LOG" >&2
    fi
    printf -- '--- last 40 lines this start wrote to %s ---\n' "$SERVER_LOG" >&2
    if [[ -f "$SERVER_LOG" ]] && (( $(stat -c %s "$SERVER_LOG") > offset )); then
        tail -c +"$((offset + 1))" "$SERVER_LOG" | tail -n 40 >&2
    else
        printf '(nothing)\n' >&2
    fi
    printf -- '---\nkafka.sh: %s\n' "$sentence" >&2
}

do_start() {
    local pid t0 t_step cp log_offset
    t0="$(now_ms)"
    if pid="$(read_pid)" && pid_is_broker "$pid"; then
        local running
        running="$(running_bootstrap)"
        if [[ "$running" != "$BOOTSTRAP" ]]; then
            die "a broker from $CACHE is already running (pid $pid) on $running, not on $BOOTSTRAP; run 'deploy/kafka/kafka.sh stop' first to change ports, or use another CTXPRESS_KAFKA_HOME"
        fi
        if port_open "$PORT"; then
            say "already running (pid $pid), bootstrap $BOOTSTRAP"
            return 0
        fi
        die "broker pid $pid is alive but $BOOTSTRAP does not accept connections; see 'deploy/kafka/kafka.sh logs', or run 'deploy/kafka/kafka.sh stop' and start again"
    fi
    rm -f "$PID_FILE" "$BOOTSTRAP_FILE"
    if port_open "$PORT" || port_open "$CPORT"; then
        die "port $PORT or $CPORT on 127.0.0.1 is already in use by a process this script did not start; stop it, or choose other ports with CTXPRESS_KAFKA_PORT and CTXPRESS_KAFKA_CONTROLLER_PORT"
    fi
    require "$JAVA" "install Java 17+ (Kafka 4.x needs it)"

    t_step="$(now_ms)"
    do_fetch
    say "start: fetch step took $(elapsed "$t_step")"
    cp="$JARS/*"

    t_step="$(now_ms)"
    write_properties
    format_storage "$cp"
    say "start: server.properties + storage format took $(elapsed "$t_step")"

    t_step="$(now_ms)"
    touch "$SERVER_LOG"
    log_offset="$(stat -c %s "$SERVER_LOG")"
    # shellcheck disable=SC2086  # HEAP_OPTS is a list of JVM flags
    nohup setsid "$JAVA" $HEAP_OPTS -XX:+UseG1GC -Djava.awt.headless=true \
        -Dlog4j2.configurationFile="$LOG4J_CONFIG" -Dkafka.logs.dir="$DATA" \
        -cp "$cp" kafka.Kafka "$PROPS" >"$CONSOLE_LOG" 2>&1 </dev/null 9>&- &
    pid=$!
    printf '%s\n' "$pid" >"$PID_FILE"
    printf '%s\n' "$BOOTSTRAP" >"$BOOTSTRAP_FILE"
    say "start: launched pid $pid, waiting up to ${START_TIMEOUT} s for $BOOTSTRAP ..."

    local deadline=$(( $(date +%s) + START_TIMEOUT )) started=0
    while :; do
        if ! kill -0 "$pid" 2>/dev/null; then
            rm -f "$PID_FILE" "$BOOTSTRAP_FILE"
            show_failure "$log_offset" "The broker process exited during start-up; read the lines above (a port in use, a Java older than 17 or a corrupt $LOG_DIRS are the usual causes; 'rm -rf $DATA $CLUSTER_ID_FILE' resets the broker's data)."
            exit 1
        fi
        if (( started == 0 )) && tail -c +"$((log_offset + 1))" "$SERVER_LOG" 2>/dev/null \
            | grep -q 'Kafka Server started'; then
            started=1
        fi
        if (( started == 1 )) && port_open "$PORT"; then
            break
        fi
        if (( $(date +%s) >= deadline )); then
            show_failure "$log_offset" "Not ready after ${START_TIMEOUT} s, so the broker (pid $pid) is being stopped. Read the log above, or raise CTXPRESS_KAFKA_START_TIMEOUT on a slow machine, then run 'deploy/kafka/kafka.sh start' again."
            stop_pid "$pid"
            rm -f "$PID_FILE" "$BOOTSTRAP_FILE"
            exit 1
        fi
        sleep 0.2
    done
    say "start: broker ready in $(elapsed "$t_step") (JVM launch to 'Kafka Server started' + port open)"
    say "running (pid $pid), bootstrap $BOOTSTRAP, total $(elapsed "$t0")"
}

stop_pid() {  # SIGTERM, wait STOP_TIMEOUT, SIGKILL
    local pid="$1" i
    kill -TERM "$pid" 2>/dev/null || return 0
    for (( i = 0; i < STOP_TIMEOUT * 5; i++ )); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.2
    done
    say "stop: pid $pid still alive after ${STOP_TIMEOUT} s, sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    for (( i = 0; i < 50; i++ )); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
}

do_stop() {
    local pid t0
    t0="$(now_ms)"
    if ! pid="$(read_pid)"; then
        say "not running (no pid file)"
        return 0
    fi
    if ! pid_is_broker "$pid"; then
        rm -f "$PID_FILE" "$BOOTSTRAP_FILE"
        say "not running (stale pid file for pid $pid removed)"
        return 0
    fi
    say "stop: SIGTERM to pid $pid ..."
    stop_pid "$pid"
    rm -f "$PID_FILE" "$BOOTSTRAP_FILE"
    say "stopped in $(elapsed "$t0")"
}

do_status() {
    local pid running
    if pid="$(read_pid)" && pid_is_broker "$pid"; then
        running="$(running_bootstrap)"
        if port_open "${running##*:}"; then
            say "running (pid $pid), bootstrap $running"
            return 0
        fi
        say "starting or unhealthy (pid $pid alive, $running not accepting connections)"
        return 3
    fi
    say "stopped (bootstrap would be $BOOTSTRAP)"
    return 3
}

do_logs() {
    local follow=0 lines=100
    while (( $# )); do
        case "$1" in
            -f | --follow) follow=1 ;;
            -n | --lines) shift; lines="${1:?-n needs a number}" ;;
            *) die "logs: unknown option $1 (use -f and -n N)" ;;
        esac
        shift
    done
    [[ -f "$SERVER_LOG" ]] || die "no log yet at $SERVER_LOG; run 'deploy/kafka/kafka.sh start' first"
    if (( follow )); then
        exec tail -n "$lines" -F "$SERVER_LOG"
    fi
    tail -n "$lines" "$SERVER_LOG"
}

usage() {
    sed -n '2,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

cmd="${1:-}"
[[ $# -gt 0 ]] && shift
if ! resolve_port; then
    if [[ "$cmd" == start ]]; then
        die "CTXPRESS_KAFKA_BOOTSTRAP=$ENV_BOOTSTRAP names another cluster, so the ctxpress commands would not talk to a local broker; unset it (or set CTXPRESS_KAFKA_PORT) to start the local one"
    fi
    PORT=19092
fi
if [[ -n "$ENV_BOOTSTRAP" && "$cmd" == start && "$ENV_BOOTSTRAP" != "127.0.0.1:$PORT" && "$ENV_BOOTSTRAP" != "localhost:$PORT" ]]; then
    die "CTXPRESS_KAFKA_BOOTSTRAP=$ENV_BOOTSTRAP but CTXPRESS_KAFKA_PORT=$PORT: the commands would not reach this broker; make them agree (or unset one)"
fi
BOOTSTRAP="127.0.0.1:$PORT"
case "$cmd" in
    fetch) take_lock; t_fetch="$(now_ms)"; do_fetch; say "fetch: total $(elapsed "$t_fetch")" ;;
    start) take_lock; do_start ;;
    stop) take_lock; do_stop ;;
    status) do_status ;;
    logs) do_logs "$@" ;;
    -h | --help | help) usage ;;
    *) usage >&2; exit 2 ;;
esac
