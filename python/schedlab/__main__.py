"""``python -m schedlab …``: the schedlab command inside Python, where manifests naming a
Python policy run (the plain ``schedlab`` command hands them here)."""

import sys

from ._schedlab import cli_main

sys.exit(cli_main(["schedlab", *sys.argv[1:]]))
