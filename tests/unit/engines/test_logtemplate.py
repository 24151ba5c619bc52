"""The ``logtemplate`` engine: runs of log lines of one template fold to first, summary, last.

The logs are written here, with a seeded random (:func:`generated_logs`): a Python
program's retry log, nginx and Apache access logs, a Go service (slog text), a Java
service (logback, with a stack trace), systemd journal lines, and Kubernetes pod logs
(JSON lines).
"""

from __future__ import annotations

import random
import re
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path

import orjson
import pytest

from workers.core.catalog import AGGRESSIVE, STANDARD
from workers.core.tokens import TokenCounter
from workers.engines import engine_class
from workers.engines._logs import is_log_line, mask
from workers.engines.base import EngineContext
from workers.engines.logtemplate import LogTemplateEngine, fold_log
from workers.fidelity.lossy import check_lossy
from workers.pipeline.runner import Pipeline
from workers.testing import expanded, make_unit, tool_output_record

MARKER = re.compile(r"… ([^\n]*?) <<cx:([0-9a-f]{16})>>")
START = datetime(2026, 3, 2, 10, 0, 1)


# --- the logs -------------------------------------------------------------------------


def python_retry_log(rng: random.Random) -> str:
    """109 WARNING lines that differ only in the timestamp and the attempt counter."""
    t = START
    out = [
        f"{t:%Y-%m-%d %H:%M:%S},{rng.randrange(1000):03d} INFO retry_worker: "
        "starting 4 workers, queue=billing-events",
        f"{t:%Y-%m-%d %H:%M:%S},{rng.randrange(1000):03d} INFO retry_worker: "
        "connected to amqp://mq.internal:5672/billing",
    ]
    for attempt in range(1, 110):
        t += timedelta(seconds=rng.randint(1, 4))
        out.append(
            f"{t:%Y-%m-%d %H:%M:%S},{rng.randrange(1000):03d} WARNING retry_worker: upstream "
            f"http://ledger.internal:8080/v1/charge not ready, retrying in 2s (attempt {attempt})"
        )
    t += timedelta(seconds=2)
    out.append(
        f"{t:%Y-%m-%d %H:%M:%S},{rng.randrange(1000):03d} ERROR retry_worker: giving up on "
        "http://ledger.internal:8080/v1/charge after 109 attempts"
    )
    return "\n".join(out) + "\n"


_PATHS = ["/", "/healthz", "/api/v1/items", "/api/v1/items?page=2", "/static/app.js", "/login"]
_AGENTS = ['"curl/8.5.0"', '"Mozilla/5.0 (X11; Linux x86_64) Firefox/124.0"', '"kube-probe/1.29"']


def access_log(rng: random.Random, nginx: bool = True, lines: int = 300) -> str:
    """Access log lines; 5xx lines for different order paths among them."""
    t = START
    ips = [f"10.0.{rng.randint(0, 9)}.{rng.randint(2, 250)}" for _ in range(6)]
    out = []
    for _ in range(lines):
        t += timedelta(milliseconds=rng.randint(50, 900))
        ip = rng.choice(ips)
        roll = rng.random()
        if roll < 0.06:
            path, status = f"/api/orders/{rng.randint(100, 999)}", rng.choice([500, 502, 503])
        elif roll < 0.12:
            path, status = rng.choice(_PATHS), 304
        else:
            path, status = rng.choice(_PATHS), 200
        method = "POST" if path == "/login" else "GET"
        size = rng.randint(200, 9000)
        stamp = f"{t:%d/%b/%Y:%H:%M:%S} +0000"
        line = (
            f'{ip} - - [{stamp}] "{method} {path} HTTP/1.1" {status} {size} "-" '
            f"{rng.choice(_AGENTS)}"
        )
        if nginx:
            line += f" {rng.uniform(0.001, 0.9):.3f}"
        out.append(line)
    return "\n".join(out) + "\n"


def go_service_log(rng: random.Random, lines: int = 200) -> str:
    """slog text lines: health checks, requests, and db errors for different query ids."""
    t = START
    out = [f'time={t:%Y-%m-%dT%H:%M:%S}.000Z level=INFO msg="listening" addr=:8080 pid=4121']
    for _ in range(lines):
        t += timedelta(milliseconds=rng.randint(100, 2000))
        ts = f"{t:%Y-%m-%dT%H:%M:%S}.{t.microsecond // 1000:03d}Z"
        roll = rng.random()
        if roll < 0.7:
            out.append(
                f'time={ts} level=INFO msg="request handled" method=GET path=/healthz '
                f"status=200 duration={rng.uniform(0.1, 3):.3f}ms"
            )
        elif roll < 0.9:
            out.append(
                f'time={ts} level=INFO msg="request handled" method=GET '
                f"path=/api/v1/users/{rng.randint(1, 80)} status=200 "
                f"duration={rng.uniform(1, 40):.3f}ms"
            )
        else:
            out.append(
                f'time={ts} level=ERROR msg="query failed" err="context deadline exceeded" '
                f"query_id={rng.randint(1000, 9999)} duration={rng.randint(5, 6)}.0s"
            )
    return "\n".join(out) + "\n"


def java_service_log(rng: random.Random) -> str:
    """logback lines with pool statistics and one exception with its stack trace."""
    t = START
    out = []

    def line(level: str, thread: str, logger: str, msg: str) -> None:
        nonlocal t
        t += timedelta(milliseconds=rng.randint(20, 3000))
        out.append(
            f"{t:%Y-%m-%d %H:%M:%S}.{t.microsecond // 1000:03d} [{thread}] {level:<5} {logger} - {msg}"
        )

    line("INFO", "main", "c.e.orders.Application", "Started Application in 4.213 seconds")
    for _ in range(40):
        line(
            "DEBUG",
            "HikariPool-1 housekeeper",
            "com.zaxxer.hikari.pool.HikariPool",
            "HikariPool-1 - Pool stats (total=10, active=0, idle=10, waiting=0)",
        )
    for order in (1041, 1042):
        line("INFO", "http-nio-8080-exec-3", "c.e.orders.OrderService", f"Processing order {order}")
    line(
        "ERROR",
        "http-nio-8080-exec-3",
        "c.e.orders.OrderController",
        "Request failed for order 1042",
    )
    out += [
        "java.lang.IllegalStateException: order 1042 has no shipping address",
        "\tat com.example.orders.OrderService.ship(OrderService.java:88)",
        "\tat com.example.orders.OrderController.post(OrderController.java:41)",
        "\tat org.springframework.web.servlet.FrameworkServlet.service(FrameworkServlet.java:897)",
        "Caused by: java.lang.NullPointerException: address is null",
        "\tat com.example.orders.Address.of(Address.java:19)",
        "\t... 42 more",
    ]
    for _ in range(30):
        line(
            "DEBUG",
            "HikariPool-1 housekeeper",
            "com.zaxxer.hikari.pool.HikariPool",
            "HikariPool-1 - Pool stats (total=10, active=0, idle=10, waiting=0)",
        )
    return "\n".join(out) + "\n"


def journal_log(rng: random.Random) -> str:
    """systemd journal lines: a heartbeat loop, ssh logins, a unit restart."""
    t = START
    out = []

    def add(text: str) -> None:
        nonlocal t
        t += timedelta(seconds=rng.randint(1, 30))
        out.append(f"{t:%b %d %H:%M:%S} web-1 {text}")

    add("systemd[1]: Starting myapp.service - My application...")
    add("systemd[1]: Started myapp.service - My application.")
    for seq in range(1, 61):
        add(f"myapp[812]: heartbeat ok seq={seq} rss={rng.randint(80, 90)}MB")
    for user, port in (("deploy", 51234), ("alice", 40022), ("deploy", 51990)):
        add(
            f"sshd[{rng.randint(2000, 30000)}]: Accepted publickey for {user} from 10.0.0.5 port {port} ssh2"
        )
    add("myapp[812]: fatal: cannot open /var/lib/myapp/state.db: permission denied")
    add("systemd[1]: myapp.service: Main process exited, code=exited, status=1/FAILURE")
    add("systemd[1]: myapp.service: Failed with result 'exit-code'.")
    for seq in range(1, 31):
        add(f"myapp[977]: heartbeat ok seq={seq} rss={rng.randint(80, 90)}MB")
    return "\n".join(out) + "\n"


def k8s_json_log(rng: random.Random, lines: int = 150) -> str:
    """JSON lines of a pod: requests with request ids, probes, and errors."""
    t = START
    out = []
    for _ in range(lines):
        t += timedelta(milliseconds=rng.randint(100, 1500))
        ts = f"{t:%Y-%m-%dT%H:%M:%S}.{t.microsecond // 1000:03d}Z"
        roll = rng.random()
        if roll < 0.6:
            entry = {
                "ts": ts,
                "level": "info",
                "logger": "http",
                "msg": "probe ok",
                "path": "/readyz",
                "status": 200,
                "latency_ms": rng.randint(1, 9),
            }
        elif roll < 0.93:
            entry = {
                "ts": ts,
                "level": "info",
                "logger": "http",
                "msg": "request completed",
                "path": rng.choice(["/api/v1/carts", "/api/v1/items"]),
                "status": 200,
                "latency_ms": rng.randint(5, 120),
                "request_id": str(uuid.UUID(int=rng.getrandbits(128))),
            }
        else:
            entry = {
                "ts": ts,
                "level": "error",
                "logger": "payments",
                "msg": "charge declined",
                "order_id": rng.randint(100, 999),
                "status": 502,
            }
        out.append(orjson.dumps(entry).decode())
    return "\n".join(out) + "\n"


def generated_logs(seed: int = 13) -> dict[str, tuple[str, str]]:
    """name -> (command, log text); the same seed gives the same logs."""
    rng = random.Random(seed)
    return {
        "python": ("python3 retry_worker.py", python_retry_log(rng)),
        "nginx": ("./deploy.sh --tail-access", access_log(rng, nginx=True)),
        "apache": ("ssh web-2 ./show-access", access_log(rng, nginx=False)),
        "go": ("go run ./cmd/api", go_service_log(rng)),
        "java": ("mvn -q spring-boot:run", java_service_log(rng)),
        "journal": ("journalctl -u myapp --no-pager", journal_log(rng)),
        "k8s": ("kubectl logs deploy/api", k8s_json_log(rng)),
    }


# --- helpers ----------------------------------------------------------------------------


def _fold(text: str, command: str | None = None) -> tuple[str, dict[str, str]]:
    out = LogTemplateEngine().apply(
        [make_unit(1, text, command=command, tool_name="bash")],
        EngineContext(tokens=TokenCounter()),
    )
    return out.texts[0], out.stash


def _sound(before: str, after: str, stash: dict[str, str], command: str | None = None) -> None:
    assert expanded(after, stash) == before
    assert check_lossy(before, after, "tool_result", stash, (), command) == []


# --- registration -----------------------------------------------------------------------


def test_registered_lossy_between_toolfilter_and_smartcrush() -> None:
    assert engine_class("logtemplate") is LogTemplateEngine
    assert LogTemplateEngine.lossless is False
    i = STANDARD.index("logtemplate")
    assert STANDARD[i - 1] == "toolfilter" and STANDARD[i + 1] == "smartcrush"
    assert "logtemplate" in AGGRESSIVE


def test_generator_is_seeded() -> None:
    assert generated_logs(13) == generated_logs(13)
    assert generated_logs(13) != generated_logs(14)
    _, python = generated_logs()["python"]
    assert sum(" WARNING " in line for line in python.splitlines()) == 109


# --- the miner ----------------------------------------------------------------------------


def test_mask_tells_measures_from_identifiers() -> None:
    m = mask(
        "2026-03-02 10:00:05,123 WARNING w: GET /api/orders/338 status=502 took 12ms "
        "(attempt 3) pid=812 from 10.0.0.5:5432"
    )
    kinds = {(f.label, f.value): f.measure for f in m.fields}
    assert kinds[("timestamps", "2026-03-02 10:00:05,123")] is True
    assert kinds[("durations", "12ms")] is True
    assert kinds[("attempt", "3")] is True
    assert kinds[("pid", "812")] is True
    assert kinds[("paths", "/api/orders/338")] is False
    assert kinds[("status", "502")] is False
    assert kinds[("hosts", "10.0.0.5:5432")] is False
    assert m.status == 502
    access = mask('10.0.3.7 - - [02/Mar/2026:10:00:01 +0000] "GET /x HTTP/1.1" 503 512 "-" "c" 0.1')
    assert access.status == 503
    assert [(f.label, f.measure) for f in access.fields if f.value == "512"] == [("bytes", True)]


def test_log_lines_are_recognised_by_their_shape() -> None:
    logs = generated_logs()
    for name, (_, text) in logs.items():
        lines = [line for line in text.splitlines() if line.strip()]
        share = sum(map(is_log_line, lines)) / len(lines)
        assert share > 0.85, name
    for line in ("def main():", '  File "a.py", line 3, in f', "collected 12 items", "+ x = 1"):
        assert not is_log_line(line)


# --- folding --------------------------------------------------------------------------------


def test_python_warnings_fold_to_first_summary_last() -> None:
    _, text = generated_logs()["python"]
    after, stash = _fold(text, "python3 retry_worker.py")
    _sound(text, after, stash, "python3 retry_worker.py")
    lines = after.splitlines()
    assert len(lines) == 6  # 2 INFO, first WARNING, summary, last WARNING, ERROR
    assert "(attempt 1)" in lines[2] and "(attempt 109)" in lines[4]
    note = MARKER.fullmatch(lines[3])
    assert note is not None
    assert note.group(1).startswith("107 more lines like this (timestamps 2026-03-02 10:00:0")
    assert "attempt 2–108" in note.group(1)
    assert "giving up" in lines[5]


def test_error_lines_that_identify_different_things_stay_visible() -> None:
    rows = [
        f"2026-03-02 10:00:{s:02d},000 ERROR worker: order {order} failed: card declined"
        for s, order in enumerate([338, 412, 577, 338, 901, 412, 120, 121], start=10)
    ]
    text = "\n".join(rows * 3) + "\n"
    after, stash = _fold(text)
    # no two neighbours are one event: no run folds.  The same orders failing again, later,
    # repeat events in sight: they fold (logtemplate's repeats), each order's last failure stays
    _sound(text, after, stash)
    visible = after.splitlines()
    assert visible[:8] == rows
    for order in (338, 412, 577, 901, 120, 121):
        assert sum(f"order {order} failed" in line for line in visible) >= 2
    assert "lines repeating events shown above" in after


def test_error_lines_naming_dashed_ids_stay_visible() -> None:
    # pino's JSON lines: the invoice ids (INV-2026-00046) are what each error is about
    rows = [
        f'{{"level":50,"time":"2026-12-06T14:43:19.{s:03d}Z","pid":32010,"hostname":"billing-7c9f",'
        f'"msg":"tax is NaN for INV-2026-{invoice:05d} (rate undefined)"}}'
        for s, invoice in enumerate([46, 69, 92, 115, 138, 161], start=100)
    ]
    info = [
        f'{{"level":30,"time":"2026-12-06T14:43:19.{s:03d}Z","pid":32010,"msg":"invoice rendered"}}'
        for s in range(10, 40)
    ]
    text = "\n".join(info + rows) + "\n"
    after, stash = _fold(text, "node worker.js")
    _sound(text, after, stash, "node worker.js")
    for row in rows:
        assert row in after.splitlines()
    assert len(after) < len(text)


def test_error_lines_differing_only_in_measures_fold() -> None:
    rows = [
        f"2026-03-02 10:00:{s:02d},000 ERROR worker: order 338 failed after {ms}ms (attempt {s})"
        for s, ms in zip(range(10, 40), range(100, 400, 10), strict=True)
    ]
    text = "\n".join(rows) + "\n"
    after, stash = _fold(text)
    _sound(text, after, stash)
    assert after.count("\n") == 3
    assert "after 100ms (attempt 10)" in after and "after 390ms (attempt 39)" in after
    assert "28 more lines like this" in after and "attempt 11–38" in after


def test_access_log_5xx_paths_stay_visible_and_2xx_fold_with_their_paths() -> None:
    for name in ("nginx", "apache"):
        command, text = generated_logs()[name]
        after, stash = _fold(text, command)
        _sound(text, after, stash, command)
        assert len(after) < len(text) * 0.8, name
        for line in text.splitlines():
            if re.search(r'" 50\d ', line):
                assert line in after.splitlines(), (name, line)
        for note, _ in MARKER.findall(after):
            assert "–" not in note.split("timestamps", 1)[0].split("bytes", 1)[0]
        # every path of a folded 2xx line is named in its summary, or in a line above it
        for note, key in MARKER.findall(after):
            above = after.split(f"<<cx:{key}>>")[0]
            for hidden in stash[key].splitlines():
                path = hidden.split('"')[1].split(" ")[1]
                assert path in note or f" {path} " in above, (name, path, note)


def test_every_generated_log_folds_soundly() -> None:
    tokens = TokenCounter()
    for name, (command, text) in generated_logs().items():
        after, stash = _fold(text, command)
        assert after != text, name
        _sound(text, after, stash, command)
        assert tokens.count(after) < tokens.count(text), name


def test_java_stack_trace_and_journal_failures_stay() -> None:
    _, java = generated_logs()["java"]
    after, _ = _fold(java)
    for line in java.splitlines():
        if "Exception" in line or "\tat " in line or "ERROR" in line or "Processing" in line:
            assert line in after.splitlines(), line
    _, journal = generated_logs()["journal"]
    after, _ = _fold(journal)
    for line in journal.splitlines():
        if "sshd" in line or "fatal" in line or "FAILURE" in line or "Failed" in line:
            assert line in after.splitlines(), line
    # two heartbeat loops (pid 812 and 977) are two runs; the second one's template shows
    # above, so only its last line stays (``… N lines like the next``)
    assert len(re.findall(r"heartbeat ok", after)) == 3
    assert re.search(r"… \d+ lines like the next \(", after)
    assert re.search(r"myapp\[977\]: heartbeat ok seq=\d+", after)


def test_untouched_units() -> None:
    _, text = generated_logs()["python"]
    ctx = EngineContext(tokens=TokenCounter())
    units = [
        make_unit(1, text, command="python3 w.py", frozen=True),
        make_unit(
            2,
            "".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(40)),
            command="cat src/app.py",
            tool_name="bash",
        ),
        make_unit(3, text, kind="text", role="user"),
        make_unit(4, "[[dup:v1 src=m9 at=0 len=3 | x]]\n" + text, command="python3 w.py"),
        make_unit(5, text[:300], command="python3 w.py"),
    ]
    out = LogTemplateEngine().apply(units, ctx)
    assert out.texts == [u.text for u in units]
    assert out.stash == {} and out.details == {}


@pytest.mark.parametrize(
    ("marker", "rides", "markers_after"),
    [
        # a note that lists places stays visible and ends the run
        ("… warning unused 2 more times at 4:3 9:1 <<cx:0123456789abcdef>>", False, 3),
        # a marker that only counts lines rides along: the whole log is one run
        ("… 3 lines omitted <<cx:0123456789abcdef>>", True, 1),
    ],
)
def test_an_earlier_marker_in_a_run(marker: str, rides: bool, markers_after: int) -> None:
    _, text = generated_logs()["python"]
    lines = text.split("\n")
    lines[60] = marker
    text = "\n".join(lines)
    after, stash = _fold(text)
    assert (marker not in after.splitlines()) is rides
    assert ("among them 1 other line;" in after) is rides
    assert expanded(after, stash) == text
    assert len(MARKER.findall(after)) == markers_after


def test_deterministic() -> None:
    for command, text in generated_logs().values():
        assert _fold(text, command) == _fold(text, command)


# --- through the pipeline and the command line -------------------------------------------------


def _records() -> list[dict[str, object]]:
    return [
        tool_output_record(f"log-{name}", text, command)
        for name, (command, text) in generated_logs().items()
    ]


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_pipeline_accepts_every_change(mode: str) -> None:
    pipeline = Pipeline()
    saved = 0
    for record in _records():
        outcome = pipeline.run_raw({**record, "mode": mode})
        assert outcome.rejections == [], record["id"]
        stats = {e["engine"]: e for e in outcome.stats["engines"]}
        if stats["logtemplate"]["status"] == "applied":
            saved += stats["logtemplate"]["tokens_before"] - stats["logtemplate"]["tokens_after"]
    assert saved > 1000


def test_expand_with_offload_restores_the_exact_input(tmp_path: Path) -> None:
    from workers.cli import main

    src, out, back, dlq, stash = (
        tmp_path / n for n in ("in.jsonl", "out.jsonl", "back.jsonl", "dlq.jsonl", "off")
    )
    src.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in _records()))
    args = ["compress", "--mode", "standard", "-i", str(src), "-o", str(out)]
    assert main([*args, "--offload", str(stash), "--dead-letter", str(dlq), "--quiet"]) == 0
    assert not dlq.exists() or dlq.read_bytes() == b""
    compressed = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    applied = {r["id"] for r in compressed if "logtemplate" in r["compression"]["engines_applied"]}
    # the others are folded by toolfilter (its similar-line rule, or the filter its lines are
    # recognised as) before logtemplate sees them
    assert {"log-python", "log-nginx", "log-apache"} <= applied
    saved = {r["id"]: r["compression"]["saved_pct"] for r in compressed}
    assert saved["log-go"] > 20, saved
    assert main(["expand", "--offload", str(stash), "-i", str(out), "-o", str(back)]) == 0
    assert back.read_bytes() == src.read_bytes()


def _mixed_log(lines_each: int) -> str:
    rng = random.Random(60)
    parts = [access_log(rng, lines=lines_each), go_service_log(rng, lines_each)]
    return "".join([*parts, k8s_json_log(rng, lines_each)])


@pytest.mark.slow
def test_a_60k_line_log_folds_in_linear_time() -> None:
    small, big = _mixed_log(2_000), _mixed_log(20_000)
    assert big.count("\n") >= 60_000
    timings = []
    for text in (small, big):
        started = time.perf_counter()
        result = fold_log(text, TokenCounter())
        timings.append(time.perf_counter() - started)
        assert result is not None
        assert expanded(result.text, result.stash) == text
        assert result.lines_folded > text.count("\n") // 3
    # ten times the lines: about ten times the time (quadratic would be a hundred)
    assert timings[1] < 30 * timings[0] + 1.0, timings
    assert timings[1] < 120.0, timings


def test_warnings_per_batch_fold_with_their_batches_listed_errors_per_batch_stay() -> None:
    # the gate folds a warning repeated per batch to one shape: a run of them keeps its
    # first and last line and lists every batch in between; an error per batch is a
    # fact per batch and stays
    warn = "2026-03-02 10:00:{:02d},{:03d} WARNING sync [42] batch {} of 900: upstream slow (latency {} ms above the 250 ms budget), retrying"
    lines = [warn.format(i, i * 7, 3 * i, 300 + 37 * i) for i in range(1, 9)]
    errors = [
        f"2026-03-02 10:01:0{i},000 ERROR   sync [42] batch {40 + i} failed" for i in range(4)
    ]
    text = "\n".join([*lines, *errors]) + "\n"
    after, stash = _fold(text, "python sync.py")
    _sound(text, after, stash, "python sync.py")
    assert lines[0] in after and lines[-1] in after
    assert lines[3] not in after
    assert re.search(r"… 6 more lines like this \(numbers 6, 9, 12, 15, 18, 21;", after), after
    for line in errors:
        assert line in after


def test_a_line_the_request_names_stays_out_of_a_run() -> None:
    rows = [
        f"2026-03-02 10:00:{s:02d},000 INFO sync: pushed snapshot region=eu-central "
        f"batch=b-{1000 + s} bytes={4000 + 7 * s}"
        for s in range(40)
    ]
    text = "\n".join(rows) + "\n"
    named = rows[17]
    folded, _ = _fold(text, "python3 sync.py")
    assert named not in folded.splitlines()  # nobody asks: it folds with the rest
    out = LogTemplateEngine().apply(
        [make_unit(1, text, command="python3 sync.py", tool_name="bash")],
        EngineContext(tokens=TokenCounter(), latest_user_text="How big was batch b-1017?"),
    )
    after = out.texts[0]
    _sound(text, after, out.stash, "python3 sync.py")
    assert named in after.splitlines()
    assert len(after) < len(text) / 2  # the runs around it still fold


def _nginx_log(level: str, message: str) -> str:
    """An nginx error log: each line a connection (``*106013``) of another client."""
    rows = [
        f"2026/11/30 01:36:{s:02d} [{level}] 2291#2291: *{106013 + 28 * s} {message}, "
        f'client: 203.0.113.{s * 7}, server: shop.internal, request: "POST /api/pay HTTP/1.1"'
        for s in range(10, 40)
    ]
    return "\n".join(rows) + "\n"


def test_errors_of_one_shape_naming_other_clients_stay_visible() -> None:
    # the gate folds them by shape (digits aside), but what identifies each differs: all stay
    text = _nginx_log("error", "connect() failed (111: Connection refused) while connecting")
    after, stash = _fold(text, "cat /var/log/nginx/error.log")
    assert after == text and stash == {}


def test_warnings_of_one_shape_naming_other_clients_still_fold() -> None:
    text = _nginx_log("warn", "upstream server temporarily disabled while reading upstream")
    after, stash = _fold(text, "cat /var/log/nginx/error.log")
    _sound(text, after, stash, "cat /var/log/nginx/error.log")
    assert after.count("\n") < 10
    for s in range(10, 40):  # each client shown, or listed by a summary
        assert re.search(rf"203\.0\.113\.{s * 7}\b", after), s


def test_a_numbered_grep_of_a_log_folds_behind_its_line_numbers() -> None:
    # ``grep -n -A 40 ERROR app.log``: the match ``28:``, its context ``29-`` ... each line
    # behind its number; the numbers are where the lines are, the log lines fold as in the file
    lines = ["28:2026-12-06 23:22:15.166 ERROR [notify.worker] job rq-3a0c failed (attempt 1)"]
    for k in range(40):
        lines.append(
            f"{29 + k}-2026-12-06 23:22:{15 + k // 10}.{k:03d} DEBUG [notify.worker] "
            f"heartbeat ok after {k % 7} ms"
        )
    lines.append("--")
    lines.append("90:2026-12-06 23:23:01.004 ERROR [notify.worker] job rq-3a0f failed (attempt 1)")
    text = "\n".join(lines) + "\n"
    command = "grep -n -A 40 ERROR logs/notify.log"
    after, stash = _fold(text, command)
    _sound(text, after, stash, command)
    assert lines[0] in after and lines[-1] in after
    assert lines[1] in after and lines[40] in after  # the run's first and last lines
    assert after.count("\n") < 10
    assert "line numbers 30–67" in after


def test_numbered_grep_errors_at_other_lines_stay_visible() -> None:
    # the same error at 30 lines of the file: 30 places, each in sight (timestamps aside)
    lines = [
        f"{65 + 7 * k}:Nov 30 06:0{k // 10}:{k % 60:02d} node-7 kubelet[1228]: E1130 "
        f'06:0{k // 10}:{k % 60:02d}.919889 1228 pod_workers.go:1298] "Error syncing pod, '
        'skipping" err="CrashLoopBackOff" pod="payments/payments-api-7d9f"'
        for k in range(30)
    ]
    text = "\n".join(lines) + "\n"
    command = "grep -n 'Error syncing' /var/log/journal.txt"
    after, stash = _fold(text, command)
    assert after == text and stash == {}


def test_only_a_grep_that_numbers_its_lines_is_read_behind_numbers() -> None:
    rows = [
        f"2026-12-06 10:00:{k % 60:02d},123 INFO worker-3 batch {k} in {k * 3} ms"
        for k in range(80)
    ]
    text = "\n".join(rows) + "\n"
    for command in (
        "grep -A 2 batch app.log",  # context without numbers
        "grep -r --include=*.log batch .",
        "grep -n batch app.log | cut -d: -f2-",  # numbered, then cut off
    ):
        result = fold_log(text, TokenCounter(), command)
        assert result is not None and result.lines_folded >= 70, command


def test_several_files_grep_context_is_read_behind_each_file_s_path() -> None:
    rows = [
        f"2026-12-06 10:00:{k % 60:02d},123 INFO worker-3 batch {k} in {k * 3} ms"
        for k in range(80)
    ]
    for path in ("logs/app.log", "logs/app-2026-12-06.log"):  # a path with dashes and digits
        text = "\n".join(
            f"{path}:{k + 10}:{row}" if k % 20 == 0 else f"{path}-{k + 10}-{row}"
            for k, row in enumerate(rows)
        ) + "\n"  # fmt: skip
        result = fold_log(text, TokenCounter(), "grep -rn -A 19 'batch 0' logs")
        assert result is not None and result.lines_folded >= 60, path
        assert expanded(result.text, result.stash) == text


def test_an_error_naming_another_thing_does_not_ride_in_a_run() -> None:
    # the same failure for other orders, between heartbeats: each order's line stays in sight;
    # the same failure for the same order again (another time) may ride
    rows: list[str] = []
    errors: list[str] = []
    for k in range(60):
        if k in (10, 25, 40):
            order = {10: 338, 25: 412, 40: 338}[k]
            line = f"2026-03-02 10:00:{k:02d},000 ERROR worker: order {order} failed: declined"
            rows.append(line)
            errors.append(line)
        else:
            rows.append(f"2026-03-02 10:00:{k:02d},000 INFO worker: heartbeat ok after {k % 7} ms")
    text = "\n".join(rows) + "\n"
    after, stash = _fold(text, "python3 worker.py")
    _sound(text, after, stash, "python3 worker.py")
    assert errors[0] in after and errors[1] in after  # orders 338 and 412
    assert len(after) < len(text) / 2
