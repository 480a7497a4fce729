"""Property-name vectors are saved on the first run that needs them (issue 31) also when
that run only reads the store: a scoring run never loads the importer, which is what
registered the store writer."""

import subprocess
import sys

from tests.kg.slicedump import slice_dump

_READER = """
import sys
from creagraph.core import propvectors
from creagraph.kg import EmbeddedKG
kg = EmbeddedKG(sys.argv[1])
kg.close()
print("importer loaded:", "creagraph.kg.build" in sys.modules)
print("writer:", propvectors._STORE_WRITER is not None)
"""


def test_a_process_reading_a_store_can_save_the_vectors(slice_path, tmp_path):
    from creagraph.kg import import_dumps

    store = tmp_path / "store"
    import_dumps([slice_dump(slice_path, tmp_path, step=97)], store, show_progress=False)
    done = subprocess.run(
        [sys.executable, "-c", _READER, str(store)], capture_output=True, text=True, check=True
    )
    assert "importer loaded: False" in done.stdout, done.stdout  # what a scoring run loads
    assert "writer: True" in done.stdout, done.stdout
