import sys

from lca.cli import main

# Guarded: worker processes started with spawn re-import the main module.
if __name__ == "__main__":
    sys.exit(main())
