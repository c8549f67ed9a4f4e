import pytest

from geoask.retrieval.lexical import build_lexicon, normalise


@pytest.mark.parametrize(
    ("text", "expected"),
    [("gdpPercap", "gdppercap"), ("state_income_annual", "state income annual"),
     ("  New-Haven ", "new haven"), ("", ""), ("US counties", "us county"),
     ("airports", "airport"), ("address", "address"), ("census", "census"), ("gas", "gas")],
)
def test_normalise(text, expected):
    assert normalise(text) == expected


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("rain in September 1999", {("September 1999", "climate_grid_monthly", 0.5)}),
        ("rain in sept. 1999", {("sept. 1999", "climate_grid_monthly", 0.5)}),
        ("incidents in Sep 2014", {("Sep 2014", "city_incidents", 0.5)}),
        ("incidents in May 2013", set()),  # no monthly or daily table covers it
    ],
)
def test_month_and_year_names_monthly_or_daily_tables(catalog, question, expected):
    hits = build_lexicon(catalog).match(question)
    assert {(h.term, h.table, h.weight) for h in hits if " " in h.term} == expected


def test_values_from_the_data_match_only_with_their_capitalisation(catalog):
    lexicon = build_lexicon(catalog, {"us_states.state_name": ["Person", "North Carolina"]})
    assert {h.term for h in lexicon.match("income per person in North Carolina")} == {
        "North Carolina"
    }
    assert {h.term for h in lexicon.match("births in Person County")} == {"Person"}


def test_one_letter_codes_never_match(catalog):
    lexicon = build_lexicon(catalog, {"city_incidents.offense": ["I", "U"]})
    assert lexicon.match("Can I see U.S. data?") == []


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What is the FIPS code of Georgia?",
         {("fip", "us_states"), ("georgia", "us_states")}),
        ("rows of state_income_annual", {("state income annual", "state_income_annual")}),
        ("per-capita incomes", set()),
        ("burglary counts", {("burglary", "city_incidents")}),
        ("income in NC", {("NC", "us_states")}),
        ("what is going on in ga", set()),  # short codes match only in capitals
        ("rainfall in 1999", {("1999", "state_income_annual"), ("1999", "climate_grid_monthly")}),
        ("population in 2050", set()),
    ],
)
def test_lexical_hits(catalog, question, expected):
    hits = build_lexicon(catalog).match(question)
    assert {(h.term, h.table) for h in hits} == expected


def test_term_naming_several_tables_weighs_less(catalog):
    hits = build_lexicon(catalog).match("state fips and FIPS")
    weights = {(h.term, h.table): h.weight for h in hits}
    assert weights[("state fip", "us_states")] == 0.5
    assert weights[("state fip", "state_income_annual")] == 0.5
    assert weights[("fip", "us_states")] == 1.0


def test_extra_values_are_matched(catalog):
    lexicon = build_lexicon(catalog, {"city_incidents.offense": ["vehicle theft"]})
    hits = lexicon.match("how many vehicle thefts? vehicle theft only")
    assert [(h.term, h.table, h.column) for h in hits] == [
        ("vehicle theft", "city_incidents", "offense")
    ]
