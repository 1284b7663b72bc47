import sys

from bench.compat.run import main

sys.exit(main())
