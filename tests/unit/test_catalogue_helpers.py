"""The catalogue suite's pure helpers: fixed parameters for EXPLAIN, plan reading, error factors, completeness.

The plans keep only the keys the helpers read from ``EXPLAIN (FORMAT JSON)``: the scan, the seed's
ORDER BY 1 LIMIT 1 trap and the tag join are trimmed from the suite's own plans on PostgreSQL 17
at smoke scale; the parallel plan follows the same format (a parallel scan is a "Seq Scan" node
with "Parallel Aware": true under a Gather), since smoke tables are too small to get one.
"""

from __future__ import annotations

import re

import pytest

from jsonbench.sqlfiles import sql_path
from jsonbench.suites import catalogue
from jsonbench.suites.catalogue import buffers, helpers, reads

#: Aggregate > Seq Scan: the full aggregation as measured.
FULL_SCAN = {"Node Type": "Aggregate", "Plans": [{"Node Type": "Seq Scan", "Relation Name": "products_doc", "Plan Rows": 20000}]}
#: Limit > Aggregate > Index Scan(doc_cat_brand): the seed's trap, stopping after the first group.
TRAP = {
    "Node Type": "Limit",
    "Plans": [
        {"Node Type": "Aggregate", "Plans": [{"Node Type": "Index Scan", "Index Name": "doc_cat_brand", "Relation Name": "products_doc"}]}
    ],
}
#: Finalize Aggregate > Gather > Partial Aggregate > Parallel Seq Scan: still a full scan of the table.
PARALLEL = {
    "Node Type": "Finalize Aggregate",
    "Plans": [
        {
            "Node Type": "Gather",
            "Workers Planned": 2,
            "Plans": [
                {
                    "Node Type": "Partial Aggregate",
                    "Plans": [{"Node Type": "Seq Scan", "Relation Name": "products_rel", "Parallel Aware": True}],
                }
            ],
        }
    ],
}
#: The tag query's join: Aggregate > Hash Join > [Bitmap Heap Scan > Bitmap Index Scan ; Hash > Index Only Scan].
JOIN = {
    "Node Type": "Aggregate",
    "Plans": [
        {
            "Node Type": "Hash Join",
            "Plan Rows": 3,
            "Actual Rows": 3,
            "Actual Loops": 1,
            "Plans": [
                {
                    "Node Type": "Bitmap Heap Scan",
                    "Relation Name": "products_rel",
                    "Plans": [{"Node Type": "Bitmap Index Scan", "Index Name": "rel_cat_brand"}],
                },
                {
                    "Node Type": "Hash",
                    "Plans": [{"Node Type": "Index Only Scan", "Index Name": "tags_tag", "Relation Name": "product_tags"}],
                },
            ],
        }
    ],
}


@pytest.mark.parametrize("script", reads.SCRIPTS)
def test_fixed_query_binds_every_variable_and_keeps_casts(script: str) -> None:
    text = sql_path(catalogue.NAME, f"pgbench/{script}").read_text(encoding="utf-8")
    query = helpers.fixed_query(text, {**buffers.FIXED_PARAMS, "products": 20000})
    assert "\\set" not in query and not query.rstrip().endswith(";")
    assert not re.search(r"(?<![:\w]):[A-Za-z_]", query), query  # no pgbench variable left
    assert query.count("::") == text.count("::")  # casts untouched


def test_fixed_query_substitutes_the_seeds_parameters() -> None:
    text = sql_path(catalogue.NAME, "pgbench/tag_doc").read_text(encoding="utf-8")
    query = helpers.fixed_query(text, buffers.FIXED_PARAMS)
    assert "'cat_' || 7" in query and "'tag_' || 33" in query


def test_fixed_query_refuses_an_unbound_variable() -> None:
    with pytest.raises(KeyError, match=":x"):
        helpers.fixed_query("\\set x random(1, 2)\nSELECT :x;", {})


def test_full_scan_classifier_catches_the_index_ordered_early_stop() -> None:
    assert helpers.is_full_scan(FULL_SCAN, "products_doc")
    assert not helpers.is_full_scan(TRAP, "products_doc")
    assert not helpers.is_full_scan(FULL_SCAN, "products_rel")  # the other design's table
    assert helpers.is_full_scan(PARALLEL, "products_rel")
    assert helpers.workers_planned(PARALLEL) == 2 and helpers.workers_planned(FULL_SCAN) == 0


def test_plan_core_and_shape() -> None:
    assert helpers.plan_core(JOIN)["Node Type"] == "Hash Join"
    assert helpers.plan_core(TRAP)["Node Type"] == "Index Scan"
    assert helpers.plan_shape(TRAP) == "Limit > Aggregate > Index Scan(doc_cat_brand)"
    assert helpers.plan_shape(JOIN) == (
        "Aggregate > Hash Join > [Bitmap Heap Scan(products_rel) > Bitmap Index Scan(rel_cat_brand) ; Hash > Index Only Scan(tags_tag)]"
    )


def test_error_factor_is_symmetric_and_at_least_one() -> None:
    assert helpers.error_factor(5000, 166666) == pytest.approx(33.33, rel=1e-3)  # the seed's 33x under
    assert helpers.error_factor(333000, 19809) == pytest.approx(16.81, rel=1e-3)  # the seed's 17x over
    assert helpers.error_factor(10, 10) == 1.0
    assert helpers.error_factor(0, 0) == 1.0  # no rows either way is exact, not a division by zero


def test_expected_metrics_cover_every_workload_and_the_load() -> None:
    suite = catalogue.Catalogue()
    pairs = suite.expected_metrics()
    workloads = {w for w, _ in pairs}
    assert workloads == set(suite.workloads) | {"load"}
    assert len(pairs) == len(set(pairs))
    assert suite.workloads == tuple(catalogue.WORKLOADS)
    for workload, spec in catalogue.WORKLOADS.items():
        assert callable(spec.run) and spec.metrics, workload
        assert {m for w, m in pairs if w == workload} == set(spec.metrics)


def test_workers_launched_reads_explain_analyze() -> None:
    launched = {
        "Node Type": "Finalize Aggregate",
        "Plans": [{"Node Type": "Gather Merge", "Workers Planned": 2, "Workers Launched": 1, "Plans": []}],
    }
    assert helpers.workers_planned(launched) == 2
    assert helpers.workers_launched(launched) == 1
    assert helpers.workers_launched(FULL_SCAN) == 0
