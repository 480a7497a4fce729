"""``python -m creagraph``: the same command line as the ``creagraph`` console script
(useful where the script is not on ``PATH``, e.g. a virtual environment not activated)."""

import sys

from creagraph.cli import main

if __name__ == "__main__":
    sys.exit(main())
