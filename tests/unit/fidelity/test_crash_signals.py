"""Critical facts of debuggers, tracers, test drivers and clusters that name no error word.

Held-out set 6 (gdb, strace, ctest, curl -v, kubectl, valgrind, AddressSanitizer on C++,
esbuild, eslint): aggressive mode's aging hid ``Program received signal SIGSEGV`` and its
frame in a nine-line output, a ctest timeout, a 504 answer, CrashLoopBackOff rows and the
first user frame of a leak; eslint errors at two places folded into one.  The samples are
written here in each tool's shape.
"""

from __future__ import annotations

import pytest

from workers.fidelity.facts import critical_lines, line_shape

GDB = """\
Program received signal SIGSEGV, Segmentation fault.
0x0000555555555387 in main (argc=4, argv=0x7fffffffe718) at /src/geo/tools/tilecat.c:24
24\t    if (sum > 1000) *p = sum;
#0  0x0000555555555387 in main (argc=4, argv=0x7fffffffe718) at /src/geo/tools/tilecat.c:24
sum = 404336
"""

STRACE = """\
[pid 26470] openat(AT_FDCWD, "tiles/missing.bin", O_RDONLY) = -1 ENOENT (No such file or directory)
[pid 26470] --- SIGSEGV {si_signo=SIGSEGV, si_code=SEGV_MAPERR, si_addr=NULL} ---
[pid 26470] +++ killed by SIGSEGV +++
--- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_KILLED, si_pid=26470, si_status=SIGSEGV} ---
bash: line 1: 26470 Segmentation fault      ./build/tilecat tiles/z12_1.bin
"""

CTEST = """\
4/5 Test #4: polyline_big .....................   Passed    0.00 sec
5/5 Test #5: lru_stress .......................***Timeout   3.00 sec
The following tests FAILED:
\t  5 - lru_stress (Timeout)
"""

CURL = """\
> GET /api/v2/reports/sla?month=2026-03 HTTP/1.1
> Host: 127.0.0.1:7491
< HTTP/1.0 504 Gateway Timeout
< Server: BaseHTTP/0.6 Python/3.11.7
"""

PODS = """\
NAME                          READY   STATUS             RESTARTS       AGE
notifier-7c9d5f-8x9dt         1/1     Running            0              2d
search-indexer-7f6d5c-r8889   0/1     CrashLoopBackOff   31 (2m10s ago) 3d
notifier-7c9d5f-gmpx4         0/1     OOMKilled          3 (41s ago)    8d
"""

VALGRIND = """\
==26463== 32 bytes in 2 blocks are definitely lost in loss record 2 of 3
==26463==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==26463==    by 0x48F99A9: strdup (strdup.c:42)
==26463==    by 0x1092B4: read_tiles (tilecat.c:15)
==26463==    by 0x10935F: main (tilecat.c:22)
"""

ASAN = """\
==26439==ERROR: AddressSanitizer: heap-use-after-free on address 0x603000000070 at pc 0x7fe1
    #3 0x558307858d72 in std::char_traits<char>::compare(char const*, char const*, unsigned long) /usr/include/c++/12/bits/char_traits.h:385
    #11 0x55830785882a in LruCache::put(std::string const&, int) /src/geo/src/lru.cpp:10
    #12 0x558307856744 in main /src/geo/tests/test_lru.cpp:9
"""

ESBUILD = """\
✘ [ERROR] Could not resolve "./styles.css"

    web/main.js:5:7:
      5 │ import "./styles.css";
        ╵        ~~~~~~~~~~~~~~

1 error
"""


def _facts(text: str, command: str) -> set[tuple[str, str]]:
    return set(critical_lines(text, "tool_result", command))


@pytest.mark.parametrize(
    ("text", "command", "wanted", "unwanted"),
    [
        (GDB, "gdb -batch -ex run -ex bt ./tilecat", [0, 1], [4]),
        (STRACE, "strace -f ./tilecat", [1, 2, 3, 4], [0]),
        (CTEST, "ctest --timeout 3", [1, 2, 3], [0]),
        (CURL, "curl -v http://127.0.0.1:7491/api/v2/reports/sla", [2], [1, 3]),
        (PODS, "kubectl get pods", [2, 3], [1]),
        (ESBUILD, "npx esbuild web/main.js --bundle", [0, 2], [3]),
    ],
)
def test_each_failure_line_is_a_fact(
    text: str, command: str, wanted: list[int], unwanted: list[int]
) -> None:
    lines = text.splitlines()
    shown = {line for _, line in _facts(text, command)}
    for k in wanted:
        assert lines[k].strip() in shown, lines[k]
    for k in unwanted:
        assert lines[k].strip() not in shown, lines[k]


def test_the_first_user_frame_skips_libc_and_takes_a_cpp_signature() -> None:
    frames = {
        line for kind, line in _facts(VALGRIND, "valgrind ./tilecat") if kind == "stack_frame"
    }
    assert frames == {"==26463==    by 0x1092B4: read_tiles (tilecat.c:15)"}
    frames = {line for kind, line in _facts(ASAN, "./test_lru") if kind == "stack_frame"}
    assert frames == {
        "#11 0x55830785882a in LruCache::put(std::string const&, int) /src/geo/src/lru.cpp:10"
    }


def test_eslint_errors_at_two_places_are_two_facts() -> None:
    first = "   8:1  error  'describe' is not defined  no-undef"
    second = "  12:3  error  'describe' is not defined  no-undef"
    assert line_shape(first.strip()) != line_shape(second.strip())
    # a warning of one rule in one file is one fact, wherever it is
    warned = "  12:3  warning  Unexpected console statement  no-console"
    again = "  40:5  warning  Unexpected console statement  no-console"
    assert line_shape(warned.strip()) == line_shape(again.strip())
