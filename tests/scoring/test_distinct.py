import numpy as np

from creagraph.scoring.distinct import nearest_other_distances


def test_nearest_other_excludes_own_paths():
    rng = np.random.default_rng(0)
    v = rng.normal(size=(30, 16)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    owners = [f"m{i % 3}" for i in range(30)]
    got = nearest_other_distances(v, owners)
    for i in range(30):
        others = [j for j in range(30) if owners[j] != owners[i]]
        assert (
            got[i] == np.float32(1.0 - max(float(v[i] @ v[j]) for j in others))
            or abs(got[i] - (1.0 - max(float(v[i] @ v[j]) for j in others))) < 1e-5
        )
    assert np.isinf(nearest_other_distances(v[:2], ["a", "a"])).all()
