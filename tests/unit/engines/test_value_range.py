"""A range of timestamps says the date once, cut where the time of day starts."""

from workers.engines._logs import value_range


def test_apache_stamps_cut_at_the_time_of_day_not_inside_the_year() -> None:
    stamps = ["07/Dec/2026:10:00:01 +0000", "07/Dec/2026:10:00:22 +0000"]
    assert value_range("ts", stamps) == "07/Dec/2026:10:00:01 +0000–10:00:22 +0000"


def test_iso_stamps_of_one_day_keep_the_date_once() -> None:
    stamps = ["2026-12-07T10:00:01Z", "2026-12-07T10:04:58Z"]
    assert value_range("ts", stamps) == "2026-12-07T10:00:01Z–10:04:58Z"


def test_stamps_of_two_days_keep_both_dates() -> None:
    stamps = ["2026-12-07 23:59:58", "2026-12-08 00:00:03"]
    assert value_range("ts", stamps) == "2026-12-07 23:59:58–2026-12-08 00:00:03"
