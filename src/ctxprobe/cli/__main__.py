import sys

from ctxprobe.cli import main

sys.exit(main())
