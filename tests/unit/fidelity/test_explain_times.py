"""Postgres's ``EXPLAIN ANALYZE`` ends with its totals (`` Planning Time: 0.412 ms``,
`` Execution Time: 18.492 ms``): summary facts, so aggressive mode keeps them (held-out set 8
folded the execution time into ``… 6 lines omitted``).  The plan below is written in the
documented format of ``psql``'s output."""

from __future__ import annotations

from workers.fidelity.facts import critical_lines

PLAN = """\
                                                    QUERY PLAN
-------------------------------------------------------------------------------------------------------------------
 HashAggregate  (cost=412.50..415.00 rows=200 width=44) (actual time=18.301..18.344 rows=12 loops=1)
   Group Key: c.country
   Batches: 1  Memory Usage: 40kB
   ->  Hash Join  (cost=38.50..337.50 rows=10000 width=16) (actual time=0.611..12.902 rows=10000 loops=1)
         Hash Cond: (o.customer_id = c.id)
         ->  Seq Scan on orders o  (cost=0.00..174.00 rows=10000 width=16) (actual time=0.009..2.641 rows=10000 loops=1)
         ->  Hash  (cost=26.00..26.00 rows=1000 width=8) (actual time=0.578..0.579 rows=1000 loops=1)
 Planning Time: 0.412 ms
 Execution Time: 18.492 ms
(9 rows)
"""


def test_explain_analyze_totals_are_facts() -> None:
    facts = {
        line for kind, line in critical_lines(PLAN, "tool_result", "psql -c 'explain analyze ...'")
    }
    assert {"Planning Time: 0.412 ms", "Execution Time: 18.492 ms"} <= facts
