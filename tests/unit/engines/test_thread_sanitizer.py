"""ThreadSanitizer's report heads a crash: ``WARNING: ThreadSanitizer: data race (pid=..)``,
its frames name no address (``#0 add_total /src/race.c:6 (race+0x1265)``).  The first frame
in user code under each headline is a fact of the gate, as under a Go race or an
AddressSanitizer finding; aggressive mode stashed the frames of every race after the
first.  The output is a real gcc ``-fsanitize=thread`` program's, built here (skipped when
gcc or its ThreadSanitizer runtime is missing)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.sound import compress_soundly, tool_output
from workers.fidelity.facts import critical_lines

RACES = """\
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
int counter; long total; int *shared;
static void bump(int d) { if (d == 0) { counter++; return; } bump(d - 1); }
static void add_total(long v) { total += v; }
static void touch(int i) { shared[i % 4] += i; }
void *work(void *arg) {
    long id = (long)arg;
    for (int i = 0; i < 100; i++) { bump(3); add_total(i); touch(i + id); }
    return NULL;
}
int main(void) {
    shared = calloc(4, sizeof(int));
    pthread_t t[4];
    for (long i = 0; i < 4; i++) pthread_create(&t[i], NULL, work, (void *)i);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    printf("%d %ld\\n", counter, total);
    return 0;
}
"""


def _races(tmp_path: Path) -> str:
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("no gcc on this machine")
    (tmp_path / "race.c").write_text(RACES)
    build = subprocess.run(
        [gcc, "-g", "-O0", "-fsanitize=thread", "race.c", "-o", "race", "-lpthread"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if build.returncode != 0:
        pytest.skip("gcc cannot build with -fsanitize=thread here")
    run = subprocess.run(["./race"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    if "ThreadSanitizer" not in run.stderr:
        pytest.skip("ThreadSanitizer did not run (address space layout?)")
    return run.stdout + run.stderr


def test_the_first_user_frame_of_every_race_stays(tmp_path: Path) -> None:
    text = _races(tmp_path)
    lines = text.splitlines()
    heads = [i for i, line in enumerate(lines) if line.startswith("WARNING: ThreadSanitizer:")]
    assert len(heads) >= 2
    firsts = [next(lines[k] for k in range(h, len(lines)) if "#0 " in lines[k]) for h in heads]
    assert all("race.c:" in frame for frame in firsts)
    facts = critical_lines(text, "tool_result", "./race")
    for frame in firsts:
        assert ("stack_frame", frame.strip()) in facts
    for mode in ("standard", "aggressive"):
        out, _ = compress_soundly(tool_output(text, "./race"), mode)
        for frame in firsts:
            assert frame.strip() in out, (mode, frame)
