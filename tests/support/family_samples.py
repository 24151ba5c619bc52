"""Real-looking outputs of toolchains, crash reports and logs, with the facts each must keep.

Each sample: (name, command, output, facts).  ``facts`` are lines (stripped,
as written, ANSI colours included) that the critical-line rules must find and
that standard and aggressive mode must keep visible.
"""

from __future__ import annotations

from typing import NamedTuple


class Sample(NamedTuple):
    name: str
    command: str
    output: str
    facts: tuple[str, ...]


def _lines(*parts: str) -> str:
    return "\n".join(parts)


_CARGO_WARNINGS = [
    line
    for i in range(12)
    for line in (
        f"warning: unused variable: `tmp{i}`",
        f"  --> src/util.rs:{10 + i * 3}:9",
        "   |",
        f"{10 + i * 3} |     let tmp{i} = compute();",
        f"   |         ^^^^{'^' * len(str(i))} help: if this is intentional, prefix it with an underscore: `_tmp{i}`",
        "   |",
        "   = note: `#[warn(unused_variables)]` on by default",
        "",
    )
]

CARGO_BUILD = Sample(
    "cargo-build",
    "cargo build",
    _lines(
        "   Compiling libc v0.2.155",
        "   Compiling serde v1.0.203",
        "   Compiling report v0.1.0 (/work/report)",
        *_CARGO_WARNINGS,
        "error[E0308]: mismatched types",
        "  --> src/lib.rs:28:13",
        "   |",
        '28 |     let n: u32 = "five";',
        "   |            ---   ^^^^^^ expected `u32`, found `&str`",
        "   |            |",
        "   |            expected due to this",
        "",
        "error[E0425]: cannot find value `totl` in this scope",
        "  --> src/report.rs:41:5",
        "   |",
        "41 |     totl",
        "   |     ^^^^ help: a local variable with a similar name exists: `total`",
        "",
        "Some errors have detailed explanations: E0308, E0425.",
        "For more information about an error, try `rustc --explain E0308`.",
        "warning: `report` (lib) generated 12 warnings",
        "error: could not compile `report` (lib) due to 2 previous errors; 12 warnings emitted",
    ),
    (
        "--> src/lib.rs:28:13",
        "--> src/report.rs:41:5",
        "error[E0308]: mismatched types",
        "error[E0425]: cannot find value `totl` in this scope",
        "--> src/util.rs:19:9",
    ),
)

RUST_PANIC = Sample(
    "rust-panic",
    "cargo run --release",
    _lines(
        "    Finished `release` profile [optimized] target(s) in 0.04s",
        "     Running `target/release/report`",
        *[f"loaded record {i} of 200" for i in range(40)],
        "thread 'main' panicked at src/report.rs:60:23:",
        "called `Option::unwrap()` on a `None` value",
        "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
    ),
    ("thread 'main' panicked at src/report.rs:60:23:",),
)

_GO_RUNS = [line for i in range(1, 31) for line in (f"=== RUN   TestDiscount/case_{i}",)]
_GO_RESULTS = [
    line
    for i in range(1, 31)
    for line in (
        (
            f"    --- FAIL: TestDiscount/case_{i} (0.00s)",
            f"        discount_test.go:{18 if i == 5 else 24}: Discount({i * 10}) = {i * 9}, want {i * 10}",
        )
        if i in (5, 17)
        else (f"    --- PASS: TestDiscount/case_{i} (0.00s)",)
    )
]
GO_TEST = Sample(
    "go-test-v",
    "go test -v ./...",
    _lines(
        "=== RUN   TestDiscount",
        *_GO_RUNS,
        "--- FAIL: TestDiscount (0.01s)",
        *_GO_RESULTS,
        *[f"=== RUN   TestTotal{i}\n--- PASS: TestTotal{i} (0.00s)" for i in range(20)],
        "FAIL",
        "FAIL\texample.com/shop/pricing\t0.014s",
        "ok  \texample.com/shop/cart\t0.009s",
        "FAIL",
    ),
    (
        "--- FAIL: TestDiscount/case_5 (0.00s)",
        "--- FAIL: TestDiscount/case_17 (0.00s)",
        "discount_test.go:18: Discount(50) = 45, want 50",
        "discount_test.go:24: Discount(170) = 153, want 170",
        "FAIL\texample.com/shop/pricing\t0.014s",
    ),
)

GO_PANIC = Sample(
    "go-panic",
    "go run ./cmd/server",
    _lines(
        *[f"2025/03/12 10:00:{i:02d} serving request {i}" for i in range(30)],
        "panic: runtime error: index out of range [5] with length 3",
        "",
        "goroutine 1 [running]:",
        "example.com/shop/inventory.lookup(...)",
        "\t/work/shop/inventory/lookup.go:14",
        "main.main()",
        "\t/work/shop/cmd/server/main.go:9 +0x1d",
        "exit status 2",
    ),
    (
        "panic: runtime error: index out of range [5] with length 3",
        "/work/shop/inventory/lookup.go:14",
    ),
)

GO_RACE = Sample(
    "go-race",
    "go test -race ./counter",
    _lines(
        "==================",
        "WARNING: DATA RACE",
        "Write at 0x00c0000a4018 by goroutine 8:",
        "  runtime.mapassign_faststr()",
        "      /usr/local/go/src/runtime/map_faststr.go:223 +0x0",
        "  example.com/shop/counter.(*Counter).Inc()",
        "      /work/shop/counter/counter.go:12 +0x44",
        "  example.com/shop/counter.TestInc.func1()",
        "      /work/shop/counter/counter_test.go:20 +0x55",
        "",
        "Previous read at 0x00c0000a4018 by goroutine 7:",
        "  example.com/shop/counter.(*Counter).Value()",
        "      /work/shop/counter/counter.go:16 +0x3a",
        "",
        "Goroutine 8 (running) created at:",
        "  example.com/shop/counter.TestInc()",
        "      /work/shop/counter/counter_test.go:18 +0x8c",
        "==================",
        "--- FAIL: TestInc (0.01s)",
        "    testing.go:1398: race detected during execution of test",
        "FAIL",
        "FAIL\texample.com/shop/counter\t0.030s",
    ),
    (
        "WARNING: DATA RACE",
        "/work/shop/counter/counter.go:12 +0x44",
        "--- FAIL: TestInc (0.01s)",
        "testing.go:1398: race detected during execution of test",
    ),
)

ASAN = Sample(
    "asan",
    "make asan && ./test_vec",
    _lines(
        "cc -fsanitize=address -g -O1 -o test_vec test_vec.c vec.c",
        *[f"push {i}: ok" for i in range(40)],
        "=================================================================",
        "==48213==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000054 "
        "at pc 0x55d4c3a1b2c4 bp 0x7ffd2c1e0a40 sp 0x7ffd2c1e0a38",
        "WRITE of size 4 at 0x602000000054 thread T0",
        "    #0 0x55d4c3a1b2c3 in vec_push /work/cvec/vec.c:42:15",
        "    #1 0x55d4c3a1b4d0 in main /work/cvec/test_vec.c:17:5",
        "    #2 0x7f1e2a229d8f in __libc_start_call_main ../sysdeps/nptl/libc_start_call_main.h:58",
        "    #3 0x55d4c3a1a1e4 in _start (/work/cvec/test_vec+0x11e4)",
        "",
        "0x602000000054 is located 0 bytes after 4-byte region [0x602000000050,0x602000000054)",
        "allocated by thread T0 here:",
        "    #0 0x7f1e2a6b4887 in __interceptor_malloc ../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:145",
        "    #1 0x55d4c3a1b1a9 in vec_new /work/cvec/vec.c:12:20",
        "",
        "SUMMARY: AddressSanitizer: heap-buffer-overflow /work/cvec/vec.c:42:15 in vec_push",
        "Shadow bytes around the buggy address:",
        *[
            f"  0x0c047fff{i:04x}: fa fa 00 00 fa fa 00 00 fa fa 00 00 fa fa 00 00"
            for i in range(12)
        ],
        "==48213==ABORTING",
    ),
    (
        "SUMMARY: AddressSanitizer: heap-buffer-overflow /work/cvec/vec.c:42:15 in vec_push",
        "#0 0x55d4c3a1b2c3 in vec_push /work/cvec/vec.c:42:15",
    ),
)

VALGRIND = Sample(
    "valgrind",
    "valgrind --leak-check=full ./leak",
    _lines(
        "==4242== Memcheck, a memory error detector",
        "==4242== Copyright (C) 2002-2022, and GNU GPL'd, by Julian Seward et al.",
        "==4242== Using Valgrind-3.22.0 and LibVEX; rerun with -h for copyright info",
        "==4242== Command: ./leak",
        "==4242== ",
        *[f"item {i} stored" for i in range(30)],
        "==4242== Invalid read of size 4",
        "==4242==    at 0x109182: sum (leak.c:14)",
        "==4242==    by 0x1091C3: main (leak.c:22)",
        "==4242==  Address 0x4a8b0d0 is 0 bytes after a block of size 16 alloc'd",
        "==4242== ",
        "==4242== HEAP SUMMARY:",
        "==4242==     in use at exit: 40 bytes in 1 blocks",
        "==4242==   total heap usage: 3 allocs, 2 frees, 1,080 bytes allocated",
        "==4242== ",
        "==4242== 40 bytes in 1 blocks are definitely lost in loss record 1 of 1",
        "==4242==    at 0x4846828: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)",
        "==4242==    by 0x109151: make_buf (leak.c:5)",
        "==4242==    by 0x1091B8: main (leak.c:20)",
        "==4242== ",
        "==4242== LEAK SUMMARY:",
        "==4242==    definitely lost: 40 bytes in 1 blocks",
        "==4242==    indirectly lost: 0 bytes in 0 blocks",
        "==4242==      possibly lost: 0 bytes in 0 blocks",
        "==4242==    still reachable: 0 bytes in 0 blocks",
        "==4242==         suppressed: 0 bytes in 0 blocks",
        "==4242== ",
        "==4242== For lists of detected and suppressed errors, rerun with: -s",
        "==4242== ERROR SUMMARY: 2 errors from 2 contexts (suppressed: 0 from 0)",
    ),
    (
        "==4242== Invalid read of size 4",
        "==4242==    at 0x109182: sum (leak.c:14)",
        "==4242== 40 bytes in 1 blocks are definitely lost in loss record 1 of 1",
        "==4242==    by 0x109151: make_buf (leak.c:5)",
        "==4242==    definitely lost: 40 bytes in 1 blocks",
        "==4242== ERROR SUMMARY: 2 errors from 2 contexts (suppressed: 0 from 0)",
    ),
)

CMAKE = Sample(
    "cmake",
    "cmake -S . -B build && cmake --build build",
    _lines(
        "-- The C compiler identification is GNU 13.2.0",
        "-- The CXX compiler identification is GNU 13.2.0",
        "-- Detecting C compiler ABI info",
        "-- Detecting C compiler ABI info - done",
        "-- Check for working C compiler: /usr/bin/cc - skipped",
        "-- Detecting C compile features",
        "-- Detecting C compile features - done",
        *[f"-- Looking for header file{i}.h - found" for i in range(20)],
        "-- Configuring done (0.4s)",
        "CMake Error at CMakeLists.txt:12 (add_executable):",
        "  No SOURCES given to target: app",
        "",
        "",
        "CMake Generate step failed.  Build files cannot be regenerated correctly.",
        "make: *** [Makefile:5: all] Error 2",
    ),
    (
        "CMake Error at CMakeLists.txt:12 (add_executable):",
        "No SOURCES given to target: app",
        "make: *** [Makefile:5: all] Error 2",
    ),
)

MAKE_K = Sample(
    "make-k",
    "make -k",
    _lines(
        *[f"cc -O2 -Wall -c -o obj/mod{i}.o src/mod{i}.c" for i in range(40)],
        "src/mod7.c: In function 'parse':",
        "src/mod7.c:31:9: error: 'len' undeclared (first use in this function)",
        "make: *** [Makefile:22: obj/mod7.o] Error 1",
        "make: *** No rule to make target 'src/missing.c', needed by 'obj/missing.o'.",
        "make: Target 'all' not remade because of errors.",
    ),
    (
        "src/mod7.c:31:9: error: 'len' undeclared (first use in this function)",
        "make: *** [Makefile:22: obj/mod7.o] Error 1",
        "make: *** No rule to make target 'src/missing.c', needed by 'obj/missing.o'.",
    ),
)

MAVEN = Sample(
    "maven",
    "mvn -B compile",
    _lines(
        "[INFO] Scanning for projects...",
        "[INFO] ",
        "[INFO] ---------------------------< shop:shop >---------------------------",
        "[INFO] Building shop 1.0-SNAPSHOT",
        *[
            f"[INFO] Downloaded from central: https://repo.maven.apache.org/maven2/org/lib{i}/lib{i}/1.{i}/lib{i}-1.{i}.jar (12 kB at 80 kB/s)"
            for i in range(25)
        ],
        "[INFO] --- compiler:3.11.0:compile (default-compile) @ shop ---",
        "[INFO] Compiling 14 source files with javac [debug target 17] to target/classes",
        "[ERROR] /work/shop/src/main/java/shop/Cart.java:[12,5] cannot find symbol",
        "  symbol:   class Discount",
        "  location: class shop.Cart",
        "[ERROR] /work/shop/src/main/java/shop/Cart.java:[30,9] cannot find symbol",
        "[INFO] BUILD FAILURE",
    ),
    (
        "[ERROR] /work/shop/src/main/java/shop/Cart.java:[12,5] cannot find symbol",
        "[ERROR] /work/shop/src/main/java/shop/Cart.java:[30,9] cannot find symbol",
    ),
)

_E = "\x1b"
TSC_PRETTY = Sample(
    "tsc-pretty",
    "npx tsc --noEmit --pretty",
    _lines(
        *[
            part
            for i, (path, pos) in enumerate(
                [("src/a.ts", (3, 5)), ("src/cart/total.ts", (41, 12)), ("src/b.ts", (7, 1))]
            )
            for part in (
                f"{_E}[96m{path}{_E}[0m:{_E}[93m{pos[0]}{_E}[0m:{_E}[93m{pos[1]}{_E}[0m - "
                f"{_E}[91merror{_E}[0m{_E}[90m TS2322: {_E}[0mType 'string' is not assignable to type 'number'.",
                "",
                f"{_E}[7m{pos[0]}{_E}[0m     const total: number = label{i};",
                f"{_E}[7m {_E}[0m {_E}[91m    ~~~~~{_E}[0m",
                "",
            )
        ],
        "",
        "Found 3 errors in 3 files.",
    ),
    (
        f"{_E}[96msrc/cart/total.ts{_E}[0m:{_E}[93m41{_E}[0m:{_E}[93m12{_E}[0m - "
        f"{_E}[91merror{_E}[0m{_E}[90m TS2322: {_E}[0mType 'string' is not assignable to type 'number'.",
        "Found 3 errors in 3 files.",
    ),
)

TSC_PLAIN = Sample(
    "tsc",
    "npx tsc --noEmit",
    _lines(
        "src/a.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'.",
        "src/a.ts(9,5): error TS2322: Type 'string' is not assignable to type 'number'.",
        "src/api/client.ts(120,17): error TS2339: Property 'data' does not exist on type 'Response'.",
    ),
    (
        "src/a.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'.",
        "src/a.ts(9,5): error TS2322: Type 'string' is not assignable to type 'number'.",
    ),
)

ESLINT = Sample(
    "eslint",
    "npx eslint src",
    _lines(
        "",
        "/work/web/src/app.js",
        "   3:7   error    'unused' is assigned a value but never used  no-unused-vars",
        "  12:1   warning  Unexpected console statement                 no-console",
        "",
        "/work/web/src/cart.js",
        "   3:7   error    'unused' is assigned a value but never used  no-unused-vars",
        "  40:11  error    'price' is not defined                       no-undef",
        "",
        "✖ 4 problems (3 errors, 1 warning)",
        "",
    ),
    (
        "/work/web/src/app.js",
        "/work/web/src/cart.js",
        "3:7   error    'unused' is assigned a value but never used  no-unused-vars",
        "40:11  error    'price' is not defined                       no-undef",
        "✖ 4 problems (3 errors, 1 warning)",
    ),
)

JEST = Sample(
    "jest",
    "npx jest",
    _lines(
        *[f"PASS src/mod{i}.test.js" for i in range(25)],
        "FAIL src/cart.test.js",
        "  Cart",
        "    ✓ adds items (3 ms)",
        "    ✕ applies discount (2 ms)",
        "",
        "  ● Cart › applies discount",
        "",
        "    expect(received).toBe(expected) // Object.is equality",
        "",
        "    Expected: 90",
        "    Received: 100",
        "",
        "      10 |   cart.add(100);",
        "    > 11 |   expect(cart.total()).toBe(90);",
        "         |                        ^",
        "",
        "      at Object.toBe (src/cart.test.js:11:24)",
        "",
        "  ● Cart › stores item shape",
        "",
        "    expect(received).toEqual(expected) // deep equality",
        "",
        "    - Expected  - 1",
        "    + Received  + 1",
        "",
        "      Array [",
        "        Object {",
        '    -     "discount": 0,',
        '    +     "discount": 10,',
        '          "price": 4.99,',
        '          "sku": "SKU-1",',
        "        },",
        "      ]",
        "",
        "      at Object.toEqual (src/cart.test.js:19:24)",
        "",
        "  ● fetchUser › fetches user 13",
        "",
        "    upstream timeout for user 13",
        "",
        "      at fetchUser (src/lib.js:15:95)",
        "      at Object.<anonymous> (src/users.test.js:11:15)",
        "",
        "Test Suites: 1 failed, 25 passed, 26 total",
        "Tests:       3 failed, 74 passed, 77 total",
    ),
    (
        "FAIL src/cart.test.js",
        "✕ applies discount (2 ms)",
        "● Cart › applies discount",
        "Expected: 90",
        "Received: 100",
        "at Object.toBe (src/cart.test.js:11:24)",
        "expect(received).toEqual(expected) // deep equality",
        '-     "discount": 0,',
        '+     "discount": 10,',
        "at Object.toEqual (src/cart.test.js:19:24)",
        "upstream timeout for user 13",
        "at fetchUser (src/lib.js:15:95)",
        "Tests:       3 failed, 74 passed, 77 total",
    ),
)

VITEST = Sample(
    "vitest",
    "npx vitest run",
    _lines(
        " RUN  v1.6.0 /work/web",
        "",
        *[f" ✓ src/mod{i}.test.ts (4 tests) {3 + i}ms" for i in range(25)],
        " ❯ src/cart.test.ts (4 tests | 1 failed) 12ms",
        "   × Cart > applies discount 5ms",
        "     → expected 100 to be 90 // Object.is equality",
        "",
        " FAIL  src/cart.test.ts > Cart > applies discount",
        "AssertionError: expected 100 to be 90 // Object.is equality",
        " ❯ src/cart.test.ts:11:24",
        "",
        " FAIL  src/cart.test.ts > Cart > stores item shape",
        "AssertionError: expected [ { sku: 'SKU-1', …(2) } ] to deeply equal [ …(1) ]",
        "",
        "- Expected",
        "+ Received",
        "",
        "  [",
        "    {",
        '-     "discount": 0,',
        '+     "discount": 10,',
        '      "price": 4.99,',
        "    },",
        "  ]",
        "",
        " ❯ addItem src/cart.ts:30:11",
        " ❯ src/cart.test.ts:19:24",
        "",
        " Test Files  1 failed | 25 passed (26)",
        "      Tests  2 failed | 102 passed (104)",
    ),
    (
        "× Cart > applies discount 5ms",
        "FAIL  src/cart.test.ts > Cart > applies discount",
        "❯ src/cart.test.ts:11:24",
        '-     "discount": 0,',
        '+     "discount": 10,',
        "❯ addItem src/cart.ts:30:11",
        "Test Files  1 failed | 25 passed (26)",
    ),
)

_PATHS = ["/api/orders/338", "/api/orders/412", "/api/orders/77", "/api/users/9/cart"]
ACCESS_LOG = Sample(
    "access-log",
    "tail -n 80 /var/log/nginx/access.log",
    _lines(
        *[
            f'10.0.0.{i % 7} - - [12/Mar/2025:10:00:{i:02d} +0000] "GET /api/products/{i} HTTP/1.1" 200 {512 + i} "-" "okhttp/4.12"'
            for i in range(50)
        ],
        *[
            f'10.0.0.{i} - - [12/Mar/2025:10:01:{i:02d} +0000] "POST {path} HTTP/1.1" 502 {150 + i} "-" "okhttp/4.12"'
            for i, path in enumerate(_PATHS)
        ],
        '10.0.0.9 - - [12/Mar/2025:10:02:00 +0000] "POST /api/orders/338 HTTP/1.1" 502 151 "-" "okhttp/4.12"',
    ),
    tuple(
        f'10.0.0.{i} - - [12/Mar/2025:10:01:{i:02d} +0000] "POST {path} HTTP/1.1" 502 {150 + i} "-" "okhttp/4.12"'
        for i, path in enumerate(_PATHS)
    ),
)

FLASK = Sample(
    "flask-log",
    "python3 app.py",
    _lines(
        " * Serving Flask app 'shop'",
        " * Debug mode: off",
        *[
            f'127.0.0.1 - - [12/Mar/2025 10:00:{i:02d}] "GET /products/{i} HTTP/1.1" 200 -'
            for i in range(30)
        ],
        "[2025-03-12 10:01:02,114] ERROR in app: Exception on /orders/12/invoice [GET]",
        "Traceback (most recent call last):",
        '  File "/work/shop/.venv/lib/python3.12/site-packages/flask/app.py", line 1473, in wsgi_app',
        "    response = self.full_dispatch_request()",
        '  File "/work/shop/shop/invoices.py", line 31, in invoice',
        "    return render(order.total / order.count)",
        "ZeroDivisionError: division by zero",
        '127.0.0.1 - - [12/Mar/2025 10:01:02] "GET /orders/12/invoice HTTP/1.1" 500 -',
        "[2025-03-12 10:01:09,530] ERROR in app: Exception on /orders/40/invoice [GET]",
        "Traceback (most recent call last):",
        '  File "/work/shop/shop/invoices.py", line 31, in invoice',
        "    return render(order.total / order.count)",
        "ZeroDivisionError: division by zero",
        '127.0.0.1 - - [12/Mar/2025 10:01:09] "GET /orders/40/invoice HTTP/1.1" 500 -',
    ),
    (
        "[2025-03-12 10:01:02,114] ERROR in app: Exception on /orders/12/invoice [GET]",
        "[2025-03-12 10:01:09,530] ERROR in app: Exception on /orders/40/invoice [GET]",
        "ZeroDivisionError: division by zero",
        '127.0.0.1 - - [12/Mar/2025 10:01:09] "GET /orders/40/invoice HTTP/1.1" 500 -',
    ),
)

NODE_TEST = Sample(
    "node-test",
    "node --test",
    _lines(
        *[f"✔ price of {i} units ({0.1 + i / 100:.6f}ms)" for i in range(30)],
        "✖ slug keeps case 4 (2.137013ms)",
        "  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
        "  + actual - expected",
        "  ",
        "  + 'item-4'",
        "  - 'Item-4'",
        "      at TestContext.<anonymous> (/work/shop/test/shop.test.js:8:42)",
        "      at Test.runInAsyncScope (node:async_hooks:206:9)",
        "      at Test.run (node:internal/test_runner/test:796:25)",
        "ℹ tests 31",
        "ℹ pass 30",
        "ℹ fail 1",
    ),
    (
        "✖ slug keeps case 4 (2.137013ms)",
        "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
        "+ 'item-4'",
        "- 'Item-4'",
        "at TestContext.<anonymous> (/work/shop/test/shop.test.js:8:42)",
    ),
)

NODE_EXCEPTION = Sample(
    "node-exception",
    "node server.js",
    _lines(
        *[f"[server] handled GET /items/{i} in {i % 9}ms" for i in range(30)],
        "/work/web/src/cart.js:44",
        "    return items.reduce((a, b) => a + b.price, 0);",
        "                 ^",
        "",
        "TypeError: Cannot read properties of undefined (reading 'reduce')",
        "    at total (/work/web/src/cart.js:44:18)",
        "    at Object.<anonymous> (/work/web/server.js:12:3)",
        "    at Module._compile (node:internal/modules/cjs/loader:1364:14)",
        "",
        "Node.js v20.12.2",
    ),
    (
        "TypeError: Cannot read properties of undefined (reading 'reduce')",
        "at total (/work/web/src/cart.js:44:18)",
    ),
)

JSON_ERRORS = Sample(
    "json-failures",
    "curl -s http://localhost:8080/api/jobs",
    _lines(
        "[",
        *[
            f'  {{"id": {i}, "name": "job-{i}", "state": "done", "message": "completed in {i}s"}},'
            for i in range(30)
        ],
        '  {"id": 30, "name": "job-30", "state": "done", "message": "3 failures in batch 7"},',
        '  {"id": 31, "name": "job-31", "state": "done", "message": "finished with 2 errors"}',
        "]",
    ),
    (
        '{"id": 30, "name": "job-30", "state": "done", "message": "3 failures in batch 7"},',
        '{"id": 31, "name": "job-31", "state": "done", "message": "finished with 2 errors"}',
    ),
)

SAMPLES = (
    CARGO_BUILD,
    RUST_PANIC,
    GO_TEST,
    GO_PANIC,
    GO_RACE,
    ASAN,
    VALGRIND,
    CMAKE,
    MAKE_K,
    MAVEN,
    TSC_PRETTY,
    TSC_PLAIN,
    ESLINT,
    JEST,
    VITEST,
    NODE_TEST,
    ACCESS_LOG,
    FLASK,
    NODE_EXCEPTION,
    JSON_ERRORS,
)
