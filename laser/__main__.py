"""`python -m laser` runs the command line."""
from .cli import main

main()
