"""A laptop host judged by its own nights: quiet on its honest last night, and every planted change caught.

Each recorded host's last night against its five earlier ones (:mod:`tests.recorded.same_host`), on two hosts: both
stay quiet on their honest last night and hear a whole version, a figure that never moved and a harness. The plants
of one cell or one workload are held on the quiet host: on the other, the versions' catalogue reads move apart by
10-25 % on honest nights (docs/methods/drift.md), and a 1.25x cell is within what its own nights allow. Its own nights move a
timing ~3 %, while the record of ``local`` holds 10-30 % inside one host for many series, pooled over noisier hosts:
judged by the record alone, none of these plants raised anything. Judged by what this host's nights show of it
(:func:`jsonbench.history.drift.series.learn_from_family`), and its versions' spread beside each other learned from the
same nights (:func:`jsonbench.history.drift.beside.own_contrasts`), each is caught the first night, as is every cell
1.25x slower, and a 1.1x version by its second night.
"""

from __future__ import annotations

from functools import cache

import pytest

from jsonbench.history import changepoints
from tests.recorded import same_host

pytestmark = pytest.mark.skipif(not changepoints.ready(), reason="Apache Otava is not installed (./bin/setup installs it)")


HOSTS = range(len(same_host.HOSTS))
#: The host whose own nights move a timing about 3 %: every first-night plant is held there.
QUIET = same_host.FIRST


@cache
def _first_night(name: str, host: int) -> same_host.Outcome:
    return same_host.judge(plant=same_host.FIRST_NIGHT[name], host=host)


@pytest.mark.parametrize("host", HOSTS, ids=same_host.host_id)
def test_the_hosts_honest_last_night_raises_nothing(host: int) -> None:
    honest = same_host.judge(host=host)
    assert len(same_host.run_ids(host)) == 6
    assert not honest.alarms, honest.notes()[:3]


@pytest.mark.parametrize("name", list(same_host.FIRST_NIGHT))
def test_each_plant_is_caught_the_first_night_and_nothing_else_alarms(name: str) -> None:
    o = _first_night(name, QUIET)
    assert o.moved, "the plant moved nothing"
    assert o.caught, f"{name}: none of {len(o.moved)} moved series alarmed"
    assert o.alarms <= o.moved, sorted(o.alarms - o.moved)[:5]


@pytest.mark.parametrize("host", HOSTS, ids=same_host.host_id)
def test_a_whole_version_is_mostly_caught(host: int) -> None:
    """Not a lucky series or two: most of PostgreSQL 18's timings alarm when all of them are 1.25x slower."""
    o = _first_night("postgres-18 1.25x (every timing)", host)
    assert len(o.caught) * 2 > len(o.moved)


@pytest.mark.parametrize("host", HOSTS, ids=same_host.host_id)
def test_a_datum_that_never_moved_names_both_values(host: int) -> None:
    o = _first_night("the average document datum +1 %", host)
    assert any("234.70006 in every one of 5 earlier nights, tonight 237.05" in n for n in o.notes()), o.notes()


@pytest.mark.parametrize("host", HOSTS, ids=same_host.host_id)
def test_a_slower_harness_of_one_engine_family_is_said_as_the_harness(host: int) -> None:
    o = _first_night("every SQLite 1.3x, the canary steady", host)
    assert o.caught and any("harness" in n for n in o.notes()), o.notes()[:2]


def test_a_version_ten_percent_slower_is_caught_within_three_nights() -> None:
    caught = [len(same_host.judge(night=-3 + k, plant=same_host.SLOW_VERSION, planted_before=k, host=QUIET).caught) for k in range(3)]
    assert any(caught), caught


def test_a_version_ten_percent_slower_is_heard_by_its_second_night() -> None:
    """By its families standing apart from the versions beside them two nights running, at the sigma this host's nights
    taught them; at the record's sigma alone, 11 of 243 timings."""
    o = same_host.judge(night=-2, plant=same_host.SLOW_VERSION, planted_before=1, host=QUIET)
    assert len(o.caught) * 4 > len(o.moved) and o.alarms <= o.moved, (len(o.caught), sorted(o.alarms - o.moved)[:3])


@pytest.mark.parametrize("cell", same_host.cells(QUIET), ids="/".join)
def test_any_cell_a_quarter_slower_is_caught_the_first_night(cell: tuple[str, str]) -> None:
    o = same_host.judge(plant=same_host.slow_cell(*cell), host=QUIET)
    assert o.caught and o.alarms <= o.moved, (len(o.caught), len(o.moved), sorted(o.alarms - o.moved)[:3])
