"""``python -m kdump`` is the same as the ``kdump`` command."""
from kdump.cli import main

main()
