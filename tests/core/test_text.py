from creagraph.core.text import normalize, normalize_loose


def test_normalize_folds_case_accents_and_space():
    assert normalize("  Penélope   CRUZ ") == "penelope cruz"
    assert normalize("Abdul-Jabbar") == "abdul-jabbar"
    assert normalize_loose("Kareem Abdul-Jabbar, Jr.") == "kareem abdul jabbar jr"
    assert normalize_loose("snake_case") == "snake case"
