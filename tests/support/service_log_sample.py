"""A real service log whose events interleave, for folding repeats wherever they stand.

``python -m tests.support.service_log_sample`` runs a small Python service
simulation (seeded: HTTP access lines, job and pool-stat lines, a payment retry
WARNING that differs only in its timestamp and attempt counter, slow-query
WARNINGs that name a customer, webhook ERRORs with a traceback), lets
:mod:`logging` write its log file, and keeps what ``tail -n 200`` of it shows
in ``tests/data/service-log/tail-200.txt`` (the temporary folder's path
replaced by ``/home/dev/proj``).  The tests read the file only.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "data" / "service-log" / "tail-200.txt"

PROGRAM = """\
import logging, random
random.seed(11)
logging.basicConfig(format="%(asctime)s %(levelname)s [%(name)s] %(message)s",
                    level=logging.INFO, filename="service.log", filemode="w")
http, jobs = logging.getLogger("http"), logging.getLogger("jobs")
db, pay = logging.getLogger("db"), logging.getLogger("payments")
paths = ["/api/orders", "/api/orders/{}", "/api/cart", "/healthz", "/api/users/{}/profile",
         "/api/invoices/{}"]
for i in range(600):
    r = random.random()
    if r < 0.55:
        p = random.choice(paths).format(random.randint(1, 500))
        st = random.choices([200, 201, 204, 404, 401, 500, 503], [70, 8, 6, 6, 3, 2, 1])[0]
        http.info('%s - "%s %s HTTP/1.1" %d %d %.1fms',
                  f"10.0.{random.randint(0, 3)}.{random.randint(1, 254)}",
                  random.choice(["GET", "POST"]), p, st, random.randint(80, 9000),
                  random.uniform(0.5, 80))
    elif r < 0.7:
        jobs.info("job %s finished in %.2fs (queue=%s, processed=%d)",
                  f"sync-{random.randint(1000, 9999)}", random.uniform(0.1, 5),
                  random.choice(["default", "emails", "reports"]), random.randint(1, 300))
    elif r < 0.8:
        db.info("pool stats: size=%d checked_out=%d overflow=%d", 20, random.randint(0, 20),
                random.randint(0, 3))
    elif r < 0.93:
        pay.warning("retrying payment sync for order %d (attempt %d of 5)", 4711,
                    random.randint(1, 5))
    elif r < 0.97:
        jobs.warning("slow query took %dms: SELECT * FROM orders WHERE customer_id = %d",
                     random.randint(500, 3000), random.randint(1, 900))
    else:
        try:
            {}["missing_key_%d" % random.randint(1, 3)]
        except KeyError:
            pay.exception("payment webhook failed for order %d", random.randint(1, 500))
"""


def capture() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "service.py").write_text(PROGRAM, encoding="utf-8")
        subprocess.run([sys.executable, "service.py"], cwd=root, check=True, timeout=120)
        done = subprocess.run(
            ["tail", "-n", "200", "service.log"],
            cwd=root,
            stdout=subprocess.PIPE,
            text=True,
            check=True,
            timeout=60,
        )
        return done.stdout.replace(str(root), "/home/dev/proj")


if __name__ == "__main__":
    OUT.write_text(capture(), encoding="utf-8")
    print(f"wrote {OUT}")
