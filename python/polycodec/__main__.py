"""``python -m polycodec``: see ``polycodec._cli``."""

import sys

from ._cli import main

sys.exit(main())
