import sys

from lca.cli import main

sys.exit(main())
