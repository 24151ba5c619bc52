"""Lines alike but for their HTTP status class are not "similar lines".

Held-out set 29: a load generator listed its slow requests (``1.41s http://.../orders/11752
?sku=SKU-0247&qty=5 -> 200``); standard kept the first and folded the other 14 into
``… 14 similar lines omitted``, the ``-> 500`` and all seven ``-> 504`` lines with them: the
one sign of the timeouts the session was about.  A line's shape now keeps the class of an
HTTP status (after an arrow, a ``status``/``code`` key, an access log's request).
"""

from __future__ import annotations

from tests.support.sound import compress_soundly, tool_output
from workers.engines.toolfilter.plan import _shape

COMMAND = "python3 bin/loadgen.py http://127.0.0.1:36550 3000 8"


def _report() -> str:
    lines = ["requests: 3000 in 17.0s (177 req/s)", "slow requests (>1s): 16"]
    for k in range(8):
        status = 500 if k == 4 else 200
        lines.append(f"  1.{40 - k}s http://127.0.0.1:36550/orders/{11750 - k}?qty={k} -> {status}")
    for k in range(7):
        lines.append(f"  2.5{k}s http://127.0.0.1:36550/orders/{10530 - k}?qty={k} -> 504")
    return "\n".join(lines) + "\n"


def test_a_failed_request_is_not_like_a_good_one() -> None:
    out, _ = compress_soundly(tool_output(_report(), COMMAND), "standard")
    shown = out.splitlines()
    assert "  1.36s http://127.0.0.1:36550/orders/11746?qty=4 -> 500" in shown
    assert "  2.50s http://127.0.0.1:36550/orders/10530?qty=0 -> 504" in shown
    assert "  1.40s http://127.0.0.1:36550/orders/11750?qty=0 -> 200" in shown
    assert "similar lines omitted" in out  # lines of one class still fold


def test_a_status_keeps_its_class_in_a_shape() -> None:
    assert _shape("GET /a -> 200") == _shape("GET /a -> 204")
    assert _shape("GET /a -> 200") != _shape("GET /a -> 503")
    assert _shape('x "GET /a HTTP/1.1" 200 12') != _shape('x "GET /a HTTP/1.1" 404 12')
    assert _shape("status=200 took 3ms") != _shape("status=500 took 3ms")
    assert _shape("qty=200 took 3ms") == _shape("qty=500 took 3ms")  # not a status
