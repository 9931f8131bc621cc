"""``python -m ssdlab`` runs the ``ssdlab`` command."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
